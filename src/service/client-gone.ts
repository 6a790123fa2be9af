// Whether a request's client has gone. Its own module so that what only needs
// this rule (the transports' request wrappers, which the CLI's `serve` flags
// import) does not load the whole operation table and its validators.

/**
 * Whether the client has gone: the transport's own answer, and the signal only when it gives none
 * (the transport may make the signal only when it is asked for). The transports' requests ask the same.
 */
export function hasClientGone(source: { clientGone?(): boolean; readonly signal?: AbortSignal | undefined }): boolean {
  return source.clientGone !== undefined ? source.clientGone() : source.signal?.aborted === true;
}
