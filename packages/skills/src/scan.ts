import type { ScanLimits } from './config.js';

/** One file of a skill as fetched, before anything is written. */
export interface SkillFile {
  /** Path inside the skill folder, `/`-separated. */
  path: string;
  /** `file`, or what else the archive said the entry is (a `symlink`, a `link`, a device...). */
  type: 'file' | 'directory' | 'symlink' | 'link' | 'other';
  /** Unix permission bits from the archive. */
  mode: number;
  data: Buffer;
}

/** Why a scan refused a file. */
export type ScanRule =
  | 'path_escape'
  | 'symlink'
  | 'special_file'
  | 'file_too_large'
  | 'archive_too_large'
  | 'too_many_files'
  | 'executable_undeclared'
  | 'credential_path'
  | 'pipe_to_shell'
  | 'encoded_exec'
  | 'reverse_shell'
  | 'destructive_command'
  | 'secret_exfiltration';

/** One refusal: the file, the line (1-based, for pattern rules) and the rule. */
export interface ScanFinding {
  path: string;
  line?: number;
  rule: ScanRule;
  /** A short description; never the matched text (it may hold a credential path or a URL). */
  detail: string;
}

/** The dangerous-pattern list: each is checked on every line of every text file. */
const PATTERNS: { rule: ScanRule; detail: string; pattern: RegExp }[] = [
  {
    rule: 'credential_path',
    detail: 'reads a credential location (SSH keys, cloud credentials, .netrc, shadow file)',
    pattern:
      /(~|\$HOME|\/home\/[^/\s]+|\/root)\/\.(ssh|aws|gnupg|netrc|docker\/config\.json|kube\/config)|\bid_(rsa|ed25519|ecdsa)\b|\/etc\/shadow\b|\.aws\/credentials\b|\.git-credentials\b/i,
  },
  {
    rule: 'pipe_to_shell',
    detail: 'pipes a download to a shell',
    pattern:
      /\b(curl|wget|fetch|iwr|Invoke-WebRequest)\b[^|\n]*\|\s*(sudo\s+)?(ba|z|da|k)?sh\b|\b(ba)?sh\s+<\(\s*(curl|wget)\b/i,
  },
  {
    rule: 'encoded_exec',
    detail: 'decodes and executes a hidden payload',
    pattern:
      /base64\s+(-d|--decode)[^|\n]*\|\s*(ba)?sh\b|\beval\s*\(\s*(atob|Buffer\.from)\(|\bexec\(\s*base64/i,
  },
  {
    rule: 'reverse_shell',
    detail: 'opens a reverse shell',
    pattern: /\/dev\/tcp\/|\bnc\s+(-[a-z]*e|.*\s-e\s)|\bsocat\b.*\bexec:/i,
  },
  {
    rule: 'destructive_command',
    detail: 'deletes from the filesystem root or home',
    pattern: /\brm\s+-[a-z]*r[a-z]*f?[a-z]*\s+(--no-preserve-root\s+)?(\/|~|\$HOME)(\s|$|\*)/i,
  },
  {
    rule: 'secret_exfiltration',
    detail: 'sends environment variables or keys to a remote host',
    pattern:
      /\b(curl|wget)\b[^\n]*(\$\{?[A-Z_]*(KEY|TOKEN|SECRET|PASSWORD)[A-Z_]*\}?|\benv\b\s*\|)|\benv\s*\|\s*(curl|nc)\b/i,
  },
];

const EXEC_BITS = 0o111;

/** True when the bytes look like a program: a `#!` line, an ELF, Mach-O or PE header. */
function looksExecutable(data: Buffer): boolean {
  if (data.length >= 2 && data[0] === 0x23 && data[1] === 0x21) return true;
  const magic = data.subarray(0, 4).toString('hex');
  return (
    ['7f454c46', 'cffaedfe', 'cefaedfe', 'feedfacf', 'feedface'].includes(magic) || magic.startsWith('4d5a')
  );
}

/** True for a path that stays inside the skill folder. */
function safeRelativePath(path: string): boolean {
  if (path.length === 0 || path.length > 512 || path.startsWith('/') || /^[a-zA-Z]:/.test(path)) return false;
  if (path.includes('\\') || path.includes('\0')) return false;
  return path.split('/').every((part) => part !== '..' && part !== '');
}

/**
 * Scans a skill's files before any is written: paths stay inside the folder, no symlinks or
 * special files, size caps, no executables except those `declaredExecutables` names, and the
 * dangerous-pattern list on every line of text files (reported by line). An empty answer
 * means the skill may be written.
 */
export function scanSkillFiles(
  files: readonly SkillFile[],
  limits: ScanLimits,
  declaredExecutables: readonly string[] = [],
): ScanFinding[] {
  const findings: ScanFinding[] = [];
  const regular = files.filter((file) => file.type !== 'directory');
  if (regular.length > limits.maxFiles) {
    findings.push({ path: '.', rule: 'too_many_files', detail: `more than ${limits.maxFiles} files` });
  }
  let total = 0;
  const declared = new Set(declaredExecutables);
  for (const file of regular) {
    if (!safeRelativePath(file.path)) {
      findings.push({
        path: file.path.slice(0, 200),
        rule: 'path_escape',
        detail: 'path leaves the skill folder',
      });
      continue;
    }
    if (file.type === 'symlink' || file.type === 'link') {
      findings.push({ path: file.path, rule: 'symlink', detail: 'links are not allowed in a skill' });
      continue;
    }
    if (file.type !== 'file') {
      findings.push({ path: file.path, rule: 'special_file', detail: 'only regular files are allowed' });
      continue;
    }
    total += file.data.length;
    if (file.data.length > limits.maxFileBytes) {
      findings.push({
        path: file.path,
        rule: 'file_too_large',
        detail: `larger than ${limits.maxFileBytes} bytes`,
      });
      continue;
    }
    const executable = (file.mode & EXEC_BITS) !== 0 || looksExecutable(file.data);
    if (executable && !declared.has(file.path)) {
      findings.push({
        path: file.path,
        rule: 'executable_undeclared',
        detail: 'executable file not declared under executables in SKILL.md',
      });
    }
    findings.push(...scanText(file));
  }
  if (total > limits.maxTotalBytes) {
    findings.push({
      path: '.',
      rule: 'archive_too_large',
      detail: `more than ${limits.maxTotalBytes} bytes unpacked`,
    });
  }
  return findings;
}

/** The dangerous patterns, line by line, of a text file (binary files are left to the executable rule). */
function scanText(file: SkillFile): ScanFinding[] {
  if (file.data.includes(0)) return [];
  const findings: ScanFinding[] = [];
  const lines = file.data.toString('utf8').split('\n');
  lines.forEach((line, index) => {
    for (const { rule, detail, pattern } of PATTERNS) {
      if (pattern.test(line)) findings.push({ path: file.path, line: index + 1, rule, detail });
    }
  });
  return findings;
}
