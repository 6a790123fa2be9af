// Durations as recipes write them: "6h", "30m", "90s", "1h30m", or a number
// of seconds.

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** Seconds of a duration, or an error naming what is allowed. */
export function durationSeconds(value: string | number): number | { error: string } {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? value : { error: `${value} is not a duration (allowed: a number of seconds ≥ 0, or "6h", "30m", "90s", "1h30m")` };
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text);
  const parts = [...text.matchAll(/(\d+(?:\.\d+)?)\s*([smhd])/gi)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('').replace(/\s/g, '') !== text.replace(/\s/g, '')) {
    return { error: `"${value}" is not a duration (allowed: a number of seconds, or "6h", "30m", "90s", "1h30m")` };
  }
  return parts.reduce((sum, p) => sum + Number(p[1]) * UNIT_SECONDS[p[2]!.toLowerCase()]!, 0);
}

/** "42m", "1h 5m", "30s": what is left of a wait, for people. */
export function describeLeft(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.round(s / 60);
  if (m < 60) return `${m}m`;
  return `${Math.floor(m / 60)}h${m % 60 ? ` ${m % 60}m` : ''}`;
}
