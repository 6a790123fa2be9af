// The defaults of the fields temporal and sentinel recipes share
// (recipes-and-sdk.md §3; their shape, TriggerFields, is in ../types.ts).
import type { TriggerMode } from '../types.ts';

export const TRIGGER_DEFAULTS = {
  mode: 'recipe' as TriggerMode,
  enabled: true,
  cooldown: 0,
  ttl: 600,
  on_ttl_expire: 'fail' as const,
  notify: 'failure' as const,
  circuit_breaker_threshold: 3,
  circuit_breaker_reset_ttl: 3600,
};
