// What the Electron security scan must find, as a pure function over electronegativity's results:
// no HIGH finding, no MEDIUM one but the review item every preload gets (PRELOAD_JS_CHECK), every
// LOW one explained in docs/security.md, and every file parsed (a file the tool could not parse is
// a file it did not check).

export type Severity = 'HIGH' | 'MEDIUM' | 'LOW' | 'INFORMATIONAL';

export interface Finding {
  id: string;
  severity: Severity;
  confidence: string;
  /** Relative to the project root, as the file is named in the repository. */
  file: string;
  line: number;
  column: number;
  description: string;
  manualReview: boolean;
}

export interface ParseError {
  file: string;
  message: string;
  /** The tool parsed the file with a warning (still checked). */
  tolerable: boolean;
}

/** The only MEDIUM finding allowed: electronegativity asks for a review of every preload script. */
export const ALLOWED_MEDIUM: readonly string[] = ['PRELOAD_JS_CHECK'];

/** The heading of docs/security.md's section that explains each LOW finding. */
export const LOW_SECTION = 'LOW findings';

/**
 * The check ids docs/security.md explains: each `CHECK_ID` in backticks in the section whose
 * heading contains "LOW findings" (up to the next heading of the same or a higher level).
 */
export function explainedLowFindings(doc: string): Set<string> {
  const ids = new Set<string>();
  let level = 0;
  for (const line of doc.split('\n')) {
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (heading) {
      const depth = heading[1]?.length ?? 0;
      if ((heading[2] ?? '').includes(LOW_SECTION)) {
        level = depth;
        continue;
      }
      if (level !== 0 && depth <= level) level = 0;
    }
    if (level === 0) continue;
    for (const match of line.matchAll(/`([A-Z][A-Z0-9_]+)`/g)) ids.add(match[1] ?? '');
  }
  return ids;
}

export interface Verdict {
  /** Why the scan fails; empty when it passes. */
  failures: string[];
  /** What passes but is worth saying (reviewed MEDIUM and explained LOW findings, tolerable parse warnings). */
  notes: string[];
}

const where = (f: Finding): string => `${f.file}:${f.line}:${f.column}`;

export function judge(findings: readonly Finding[], errors: readonly ParseError[], explainedLow: ReadonlySet<string>): Verdict {
  const failures: string[] = [];
  const notes: string[] = [];
  for (const error of errors) {
    if (error.tolerable) notes.push(`parsed with a warning: ${error.file}: ${error.message}`);
    else failures.push(`not scanned, the tool could not parse it: ${error.file}: ${error.message}`);
  }
  for (const f of findings) {
    const line = `${f.severity} ${f.id} at ${where(f)}: ${f.description}`;
    if (f.severity === 'HIGH') failures.push(line);
    else if (f.severity === 'MEDIUM') (ALLOWED_MEDIUM.includes(f.id) ? notes : failures).push(ALLOWED_MEDIUM.includes(f.id) ? `${line} (reviewed: docs/security.md)` : line);
    else if (f.severity === 'LOW') {
      if (explainedLow.has(f.id)) notes.push(`${line} (explained in docs/security.md)`);
      else failures.push(`${line}: fix it, or explain ${f.id} under "${LOW_SECTION}" in docs/security.md`);
    } else notes.push(line);
  }
  return { failures, notes };
}
