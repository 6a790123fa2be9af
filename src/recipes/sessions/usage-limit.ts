// An agent that stopped on its provider's usage limit, and when the limit
// resets, read from what the CLI printed. Shapes (read from the CLIs'
// own strings):
//   claude (older)  "Claude AI usage limit reached|1765033200"       (epoch seconds)
//   claude 2.x      "You've hit your session limit · resets 3pm (Europe/London)"
//                   "You've hit your weekly limit · resets Dec 8, 3pm (UTC)"
//                   stream-json {"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":<epoch s>}}
//   codex           "You've hit your usage limit. … Try again at 3:04 PM."
//                   "… or try again at Dec 7th, 2026 3:04 PM."
// Times without a zone are the machine's local time: the CLI printed them
// in its own (same) zone.

export interface UsageLimit {
  provider: 'claude' | 'codex';
  /** Epoch milliseconds when the limit resets; null when the message gave no time. */
  resetAt: number | null;
  /** The CLI's own words. */
  message: string;
}

const CLAUDE_EPOCH = /Claude AI usage limit reached\|(\d{9,13})/;
const CLAUDE_LIMIT = /(?:You've (?:hit|reached) your [^\n·]*?limit|usage limit reached|(?:5-hour|session|weekly) limit reached)[^\n]*/i;
const CLAUDE_RESETS = /resets\s+(?:at\s+)?([^\n(·]+?)\s*(?:\(([^)]+)\))?\s*(?:[·.]|$)/i;
const CODEX_LIMIT = /You've hit your usage limit[^\n]*|usage_limit_reached[^\n]*|rate limit exceeded[^\n]*/i;
const CODEX_RESETS = /try again at\s+([^\n]+?)\.?\s*$/im;
// Not a usage limit: claude says so itself when the server sheds load.
const NOT_A_LIMIT = /not your usage limit/i;

/** The claude usage limit in `text` (a result, an assistant message, stderr), or null. */
export function claudeUsageLimit(text: string, now = Date.now()): UsageLimit | null {
  if (NOT_A_LIMIT.test(text)) return null;
  const epoch = CLAUDE_EPOCH.exec(text);
  if (epoch) {
    const n = Number(epoch[1]);
    return { provider: 'claude', resetAt: n < 1e12 ? n * 1000 : n, message: epoch[0] };
  }
  const said = CLAUDE_LIMIT.exec(text);
  if (!said) return null;
  const resets = CLAUDE_RESETS.exec(said[0]);
  return { provider: 'claude', resetAt: resets ? clockTime(resets[1]!, now) : null, message: said[0].trim() };
}

/** The codex usage limit in an error message, or null. */
export function codexUsageLimit(text: string, now = Date.now()): UsageLimit | null {
  const said = CODEX_LIMIT.exec(text);
  if (!said) return null;
  const at = CODEX_RESETS.exec(said[0]);
  return { provider: 'codex', resetAt: at ? clockTime(at[1]!, now) : null, message: said[0].trim() };
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

/**
 * A local clock time as the CLIs print it — "3pm", "3:04 PM", "15:00",
 * "Dec 8, 3pm", "Dec 7th, 2026 3:04 PM" — as epoch ms: the next such moment
 * after `now` when no date is given. Null when it cannot be read.
 */
export function clockTime(text: string, now = Date.now()): number | null {
  const t = text.trim();
  const time = /(\d{1,2})(?::(\d{2}))?\s*([ap])\.?m\.?\b|(\d{1,2}):(\d{2})(?!\s*[ap]m)/i.exec(t);
  if (!time) return null;
  let hour = Number(time[1] ?? time[4]);
  const minute = Number(time[2] ?? time[5] ?? 0);
  const meridiem = time[3]?.toLowerCase();
  if (meridiem) {
    if (hour < 1 || hour > 12) return null;
    hour = (hour % 12) + (meridiem === 'p' ? 12 : 0);
  }
  if (hour > 23 || minute > 59) return null;
  const date = /\b([A-Za-z]{3})[a-z]*\.?\s+(\d{1,2})(?:st|nd|rd|th)?(?:,?\s+(\d{4}))?/.exec(t);
  const base = new Date(now);
  if (date && MONTHS.includes(date[1]!.toLowerCase())) {
    const month = MONTHS.indexOf(date[1]!.toLowerCase());
    const year = date[3] ? Number(date[3]) : base.getFullYear();
    const at = new Date(year, month, Number(date[2]), hour, minute).getTime();
    // "Jan 2" printed late in December is next year's.
    return !date[3] && at < now - 86_400_000 ? new Date(year + 1, month, Number(date[2]), hour, minute).getTime() : at;
  }
  const today = new Date(base.getFullYear(), base.getMonth(), base.getDate(), hour, minute).getTime();
  // A time a few minutes past is today's (printed at the minute, read a moment later), not tomorrow's.
  return today > now - 15 * 60_000 ? today : new Date(base.getFullYear(), base.getMonth(), base.getDate() + 1, hour, minute).getTime();
}
