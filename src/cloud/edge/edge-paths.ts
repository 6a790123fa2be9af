// Paths of a worker's host that are the edge's own, never the worker's.

/**
 * Cloudflare keeps /cdn-cgi/ for itself, and so does miniflare (it runs a
 * worker's scheduled handler for /cdn-cgi/mf/scheduled): such paths are not
 * the worker's. Checked as the URL will be read (`/./cdn-cgi/…` is the same path).
 */
export function isReservedEdgePath(path: string): boolean {
  const pathname = new URL(path, 'http://edge.invalid').pathname;
  return pathname === '/cdn-cgi' || pathname.startsWith('/cdn-cgi/');
}
