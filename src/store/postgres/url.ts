// PostgreSQL URLs as the command line sees them (no driver loaded).
export function isPostgresUrl(value: string): boolean {
  return /^postgres(ql)?:\/\/./.test(value);
}

