// PostgreSQL URLs as the command line sees them (no driver loaded).
export function isPostgresUrl(value: string): boolean {
  return /^postgres(ql)?:\/\/./.test(value);
}

/** The URL without its password, for messages. */
export function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'postgres://(unparsable URL)';
  }
}
