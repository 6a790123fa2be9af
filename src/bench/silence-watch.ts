// Ends a run whose servers all stopped answering. A killed server refuses each
// request at once, so its clients spin on refusals for the rest of --duration
// (a 10-minute run burnt ten minutes of every core on a dead server); once no
// request has been answered for a while and requests keep failing without an
// answer, the run ends there and says so.

/** How long every server must have been silent, with requests failing, before the run ends. */
export const silentForMs = 3000;

export class SilenceWatch {
  private answered = 0;
  private unanswered = 0;
  private lastAnswerMs: number;
  private failedSinceAnswer = false;

  constructor(startMs: number) {
    this.lastAnswerMs = startMs;
  }

  /**
   * Feeds the run's totals so far (requests answered, requests that got no answer); returns the time of
   * the last answer once the servers have been silent for `silentForMs` while requests failed.
   */
  silentSince(answered: number, unanswered: number, nowMs: number): number | undefined {
    if (answered > this.answered) {
      this.lastAnswerMs = nowMs;
      this.failedSinceAnswer = false;
    } else if (unanswered > this.unanswered) this.failedSinceAnswer = true;
    this.answered = answered;
    this.unanswered = unanswered;
    return this.failedSinceAnswer && nowMs - this.lastAnswerMs >= silentForMs ? this.lastAnswerMs : undefined;
  }
}

/** The summary's line for a run the watch ended (times from the run's start, ms). */
export function endedEarly(endedAtMs: number, lastAnswerAtMs: number): string {
  return `the run ended early, at ${(endedAtMs / 1000).toFixed(1)} s: no request was answered after ${(lastAnswerAtMs / 1000).toFixed(1)} s, and requests kept failing without an answer for ${silentForMs / 1000} s`;
}
