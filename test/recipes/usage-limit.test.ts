// Reading the usage-limit messages of claude and codex (shapes taken from the
// installed CLIs' own strings), the wait rule on the manual clock, durations,
// and `codex exec resume`'s arguments.
import { describe, expect, it } from 'vitest';
import { codexArgs } from '../../src/recipes/backends/codex.ts';
import { hasWholeLine } from '../../src/recipes/loop/loop-spec.ts';
import { claudeResumeArgs, codexResumeArgs } from '../../src/recipes/sessions/agent-session.ts';
import { durationSeconds } from '../../src/recipes/sessions/durations.ts';
import { claudeUsageLimit, codexUsageLimit } from '../../src/recipes/sessions/usage-limit.ts';
import { describeWait, planWait, RETRY_WITHOUT_TIME_MS, waitUntil } from '../../src/recipes/sessions/usage-wait.ts';
import { ManualClock, turns } from '../support/manual-clock.ts';

// 2026-12-06 14:18 local time.
const now = new Date(2026, 11, 6, 14, 18).getTime();
const at = (h: number, m = 0, day = 6, month = 11, year = 2026) => new Date(year, month, day, h, m).getTime();

describe('usage-limit messages', () => {
  it('reads claude\'s messages with their reset times', () => {
    expect(claudeUsageLimit('Claude AI usage limit reached|1765033200', now)).toEqual({ provider: 'claude', resetAt: 1765033200_000, message: 'Claude AI usage limit reached|1765033200' });
    expect(claudeUsageLimit("You've hit your session limit · resets 3pm (Europe/London)", now)?.resetAt).toBe(at(15));
    expect(claudeUsageLimit("You've hit your usage limit · resets 3:30pm", now)?.resetAt).toBe(at(15, 30));
    expect(claudeUsageLimit('5-hour limit reached ∙ resets 3pm', now)?.resetAt).toBe(at(15));
    // A time a few minutes past is today's (the wait is over); one long past is tomorrow's.
    expect(claudeUsageLimit("You've hit your session limit · resets 2:10pm", now)?.resetAt).toBe(at(14, 10));
    expect(claudeUsageLimit("You've hit your session limit · resets 9am", now)?.resetAt).toBe(at(9, 0, 7));
    expect(claudeUsageLimit("You've hit your weekly limit · resets Dec 8, 3pm (UTC)", now)?.resetAt).toBe(at(15, 0, 8));
    expect(claudeUsageLimit('usage limit reached', now)).toEqual({ provider: 'claude', resetAt: null, message: 'usage limit reached' });
    expect(claudeUsageLimit('Server is temporarily limiting requests (not your usage limit)', now)).toBeNull();
    expect(claudeUsageLimit('all done', now)).toBeNull();
  });

  it('reads codex\'s messages with their reset times', () => {
    const plus = "You've hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/settings/usage to purchase more credits or try again at 3:04 PM.";
    expect(codexUsageLimit(plus, now)?.resetAt).toBe(at(15, 4));
    expect(codexUsageLimit("You've hit your usage limit. Try again at Dec 7th, 2026 9:15 AM.", now)?.resetAt).toBe(at(9, 15, 7));
    expect(codexUsageLimit("You've hit your usage limit. Try again later.", now)?.resetAt).toBeNull();
    expect(codexUsageLimit('stream disconnected before completion; retrying 1/5', now)).toBeNull();
  });
});

describe('the wait for a reset', () => {
  it('waits until just after the reset, within usage_limit_wait; refuses a reset beyond it', () => {
    const limit = { provider: 'claude' as const, resetAt: at(15), message: 'x' };
    expect(planWait(limit, now, 6 * 3600_000, '6h')).toEqual({ until: at(15) + 1000 });
    expect(planWait(limit, now, 30 * 60_000, '30m')).toEqual({ refused: 'claude usage limit resets at 15:00, later than usage_limit_wait allows (30m, 30m left)' });
    // Without a time: asked again after at most RETRY_WITHOUT_TIME_MS, never past the allowance.
    const unknown = { provider: 'codex' as const, resetAt: null, message: 'x' };
    expect(planWait(unknown, now, 6 * 3600_000, '6h')).toEqual({ until: now + RETRY_WITHOUT_TIME_MS });
    expect(planWait(unknown, now, 60_000, '6h')).toEqual({ until: now + 60_000 });
    expect('refused' in planWait(unknown, now, 0, '6h')).toBe(true);
    // Limited again right after a wait, with a reset already past: a minute, not a spin.
    expect(planWait({ ...limit, resetAt: now - 5000 }, now, 6 * 3600_000, '6h', true)).toEqual({ until: now + 60_000 });
    expect(describeWait('claude', at(15), at(14, 18))).toBe('waiting for claude usage limit reset at 15:00 (42m left)');
    // A reset past midnight names its day, so "00:12" is not read as this morning.
    expect(describeWait('claude', at(0, 12, 7), at(23, 30))).toBe('waiting for claude usage limit reset at Dec 7 00:12 (42m left)');
  });

  it('resumes when the clock reaches the reset, not before; a cancel ends the wait', async () => {
    const clock = new ManualClock(now);
    let resumed: boolean | null = null;
    void waitUntil(clock, at(15), new AbortController().signal).then((r) => {
      resumed = r;
    });
    await clock.advance(41 * 60_000);
    await turns();
    expect(resumed).toBeNull();
    await clock.advance(60_000);
    await turns();
    expect(resumed).toBe(true);
    const cancel = new AbortController();
    let cancelled: boolean | null = null;
    void waitUntil(clock, at(16), cancel.signal).then((r) => {
      cancelled = r;
    });
    cancel.abort();
    await turns();
    expect(cancelled).toBe(false);
  });
});

describe('durations and lines', () => {
  it('reads usage_limit_wait durations and names what is allowed', () => {
    expect(durationSeconds('6h')).toBe(21600);
    expect(durationSeconds('30m')).toBe(1800);
    expect(durationSeconds('1h30m')).toBe(5400);
    expect(durationSeconds(90)).toBe(90);
    expect(durationSeconds('soon')).toEqual({ error: expect.stringContaining('"soon" is not a duration (allowed:') });
  });

  it('counts a completion line only as a whole line', () => {
    expect(hasWholeLine('work done\nALL-DONE\n', 'ALL-DONE')).toBe(true);
    expect(hasWholeLine('print ALL-DONE on a line of its own', 'ALL-DONE')).toBe(false);
  });
});

describe('continuing sessions', () => {
  it('claude: --resume <session_id>; codex: exec resume … <thread_id> -, the sandbox as a config value', () => {
    expect(claudeResumeArgs('abc')).toEqual(['--resume', 'abc']);
    expect(claudeResumeArgs(undefined)).toEqual([]);
    const args = codexArgs({ model: 'gpt-5', permissionMode: 'acceptEdits', extraArgs: [] });
    expect(codexResumeArgs(args, 't-1')).toEqual(['exec', 'resume', '--json', '--skip-git-repo-check', '--model', 'gpt-5', '-c', 'sandbox_mode="workspace-write"', 't-1', '-']);
    expect(codexResumeArgs(args, undefined)).toBe(args);
  });
});
