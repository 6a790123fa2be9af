#!/usr/bin/env node
// Runs the TypeScript sources through tsx so that `npx vigil` works from a clone without a build step.
import { register } from 'tsx/esm/api';
register();
await import('../src/cli/main.ts');
