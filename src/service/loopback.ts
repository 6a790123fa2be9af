// Whether a peer address is this machine's loopback (IPv4, IPv6 or IPv4-mapped).
export function isLoopback(address: string): boolean {
  return address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.');
}

/** Whether a listening host (`--host`) reaches this machine only. */
export function isLoopbackHost(host: string): boolean {
  return host.toLowerCase() === 'localhost' || isLoopback(host);
}
