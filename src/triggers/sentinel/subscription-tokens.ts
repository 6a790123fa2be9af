// The bearer tokens of the sentinels' subscriptions (observe and act on the
// watched monitor): kept under the user's Vigil home, keyed by project and
// subscription, never in the project. vigil.db sits in the project's .vigil/,
// where `git add -A` takes it along in a checkout without the .gitignore that
// `vigil init` writes; it keeps the subscriptions' ids only.
import { join } from 'node:path';
import { ensureProjectHome, projectHome } from '../../home/home.ts';
import { readJsonObject, writeJsonAtomic } from '../../json/json-file.ts';

export function subscriptionTokensFile(projectRoot: string, env: NodeJS.ProcessEnv = process.env): string {
  return join(projectHome(projectRoot, env), 'sentinel-tokens.json');
}

export class SubscriptionTokens {
  constructor(
    private readonly projectRoot: string,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {}

  get(subscription: string): string | undefined {
    return this.read()[subscription];
  }

  /** Adds `tokens` and keeps, of those already there, the ones of subscriptions still in use. */
  save(tokens: Record<string, string>, inUse: ReadonlySet<string>): void {
    const kept = Object.fromEntries(Object.entries(this.read()).filter(([id]) => inUse.has(id)));
    ensureProjectHome(this.projectRoot, this.env);
    writeJsonAtomic(this.file, { ...kept, ...tokens }, 0o600);
  }

  private get file(): string {
    return subscriptionTokensFile(this.projectRoot, this.env);
  }

  private read(): Record<string, string> {
    return readJsonObject<string>(this.file) ?? {};
  }
}
