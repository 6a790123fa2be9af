// Whether a peer address is this machine's loopback (IPv4, IPv6 or IPv4-mapped).
export function isLoopback(address: string): boolean {
  return address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.');
}
