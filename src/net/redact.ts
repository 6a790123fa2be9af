// Credentials written into URLs (a source's `user:password@host`, an
// `?api_key=…`) are the URL's owner's: wherever the server shows a URL or a
// text that may hold one (the inspector, the dashboard, monitors served to
// readers, the admin snapshot, logs) it goes through here first. The user
// name, the password and the values of query keys that name a secret become
// "***"; the rest of the URL stays, so a person can still tell which it is.

const hidden = '***';

/** Query keys whose values are secrets: key, token, secret, password, api_key, access_token, sig, … */
const secretKey = /(?:^|[_.-])(?:key|apikey|token|secret|password|passwd|pass|pwd|auth|authorization|signature|sig|credentials?|session)$/i;

/** Anything that looks like an absolute URL inside a text. */
const urlInText = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>`]+/gi;

export function isSecretQueryKey(key: string): boolean {
  return secretKey.test(key);
}

/** `text` with the credentials of every URL in it replaced by "***". */
export function redactCredentials(text: string): string {
  if (!text.includes('://')) return text;
  return text.replace(urlInText, redactOne);
}

function redactOne(url: string): string {
  const schemeEnd = url.indexOf('://') + 3;
  // Userinfo: everything before the last "@" of the authority (a password may hold "@" unencoded).
  const authorityEnd = firstOf(url, ['/', '?', '#'], schemeEnd);
  let out = url;
  const at = url.lastIndexOf('@', authorityEnd - 1);
  if (at >= schemeEnd) out = `${url.slice(0, schemeEnd)}${hidden}@${url.slice(at + 1)}`;
  const query = out.indexOf('?');
  if (query === -1) return out;
  const fragment = out.indexOf('#', query);
  const end = fragment === -1 ? out.length : fragment;
  const pairs = out
    .slice(query + 1, end)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const name = eq === -1 ? pair : pair.slice(0, eq);
      let decoded = name;
      try {
        decoded = decodeURIComponent(name.replaceAll('+', ' '));
      } catch {
        // a malformed escape: judge the name as written
      }
      return eq !== -1 && isSecretQueryKey(decoded) ? `${name}=${hidden}` : pair;
    });
  return `${out.slice(0, query + 1)}${pairs.join('&')}${out.slice(end)}`;
}

function firstOf(text: string, marks: string[], from: number): number {
  let end = text.length;
  for (const mark of marks) {
    const at = text.indexOf(mark, from);
    if (at !== -1 && at < end) end = at;
  }
  return end;
}

/** A copy of `value` with every string in it redacted (objects and arrays to `maxDepth`). */
export function redactDeep<T>(value: T, maxDepth = 8): T {
  return walk(value, maxDepth) as T;
}

function walk(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return redactCredentials(value);
  if (typeof value !== 'object' || value === null || depth <= 0) return value;
  if (Array.isArray(value)) return value.map((v) => walk(v, depth - 1));
  // fromEntries defines "__proto__" as a plain key, as JSON.parse does.
  return Object.fromEntries(Object.entries(value).map(([key, v]) => [key, walk(v, depth - 1)]));
}

/** A log function whose lines are redacted; undefined stays undefined. */
export function redactingLog(log: ((line: string) => void) | undefined): ((line: string) => void) | undefined {
  return log && ((line) => log(redactCredentials(line)));
}
