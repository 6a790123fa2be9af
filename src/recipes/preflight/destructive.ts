// Destructive-intent scan over rendered prompts and build commands. A match
// blocks the run unless the recipe sets allow_destructive_intents: true, in
// which case it is only a warning.

interface Pattern {
  name: string;
  regex: RegExp;
}

const TARGET_ROOT_OR_HOME = String.raw`(?:\/|\/\*|~|~\/|~\/\*|\$HOME|\$\{HOME\}|\$HOME\/\*?)(?=\s|$|;|&|\||"|'|\))`;

export const DESTRUCTIVE_PATTERNS: Pattern[] = [
  {
    name: 'recursive delete of / or ~',
    regex: new RegExp(
      String.raw`\brm\s+(?:-{1,2}[A-Za-z-]+\s+)*(?:-[A-Za-z]*[rR][A-Za-z]*|--recursive)\s+(?:-{1,2}[A-Za-z-]+\s+)*(?:--\s+)?${TARGET_ROOT_OR_HOME}`,
    ),
  },
  { name: 'force push', regex: /\bgit\s+push\b[^\n]*?(?:\s--force(?:-with-lease)?\b|\s-[A-Za-z]*f[A-Za-z]*\b|\s\+[^\s]+)/ },
  { name: 'DROP TABLE/DATABASE', regex: /\bdrop\s+(?:table|database|schema)\b/i },
  { name: 'TRUNCATE TABLE', regex: /\btruncate\s+table\b/i },
  { name: 'mkfs', regex: /\bmkfs(?:\.[a-z0-9]+)?\b/ },
  { name: 'raw write to a disk device', regex: /\bdd\b[^\n]*\bof=\/dev\/(?:sd|nvme|hd|vd|xvd|mmcblk)/ },
  { name: 'git clean -fdx', regex: /\bgit\s+clean\s+-[A-Za-z]*f[A-Za-z]*d[A-Za-z]*x|\bgit\s+clean\s+-[A-Za-z]*x[A-Za-z]*d[A-Za-z]*f/ },
  { name: 'fork bomb', regex: /:\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:/ },
  { name: 'recursive chmod/chown of /', regex: /\bch(?:mod|own)\s+(?:-[A-Za-z]*R[A-Za-z]*\s+)\S+\s+\/(?=\s|$)/ },
];

export interface DestructiveFinding {
  where: string;
  line: number;
  pattern: string;
  excerpt: string;
}

export function scanText(text: string, where: string): DestructiveFinding[] {
  const findings: DestructiveFinding[] = [];
  text.split('\n').forEach((line, i) => {
    for (const p of DESTRUCTIVE_PATTERNS) {
      if (p.regex.test(line)) findings.push({ where, line: i + 1, pattern: p.name, excerpt: line.trim().slice(0, 120) });
    }
  });
  return findings;
}

export function describeFinding(f: DestructiveFinding): string {
  return `${f.where}:${f.line}: ${f.pattern}: ${f.excerpt}`;
}
