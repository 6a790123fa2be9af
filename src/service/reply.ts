/** What an operation answers: the HTTP status and the body every door sends. */
export interface Reply {
  readonly status: number;
  readonly body: unknown;
}
