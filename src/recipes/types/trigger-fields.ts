// Fields temporal and sentinel recipes share (recipes-and-sdk.md §3), with
// their defaults.

export type TriggerMode = 'command' | 'script' | 'recipe';

export interface TriggerFields {
  name: string;
  description?: string;
  env?: Record<string, string>;
  mode?: TriggerMode;
  target: string;
  vars?: Record<string, string>;
  workspace?: string;
  enabled?: boolean;
  allow_destructive_intents?: boolean;
  cooldown?: number;
  ttl?: number;
  on_ttl_expire?: 'fail' | 'rerun';
  notify?: 'never' | 'failure' | 'always';
  circuit_breaker_threshold?: number;
  circuit_breaker_reset_ttl?: number;
}

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
