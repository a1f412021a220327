import fs from 'node:fs';
import path from 'node:path';

/**
 * What a figure must reach: a ratio to its baseline, an absolute bound on its value, or a bound on how
 * far it may rise above its baseline (`growth`: value − baseline, e.g. a peak RSS over the idle one).
 */
export type Target = { on: 'ratio'; op: '>='; value: number } | { on: 'value'; op: '<' | '>='; value: number } | { on: 'growth'; op: '<'; value: number } | null;

export interface Figure {
  id: string;
  label: string;
  unit: string;
  value: number;
  baseline: number | null;
  baselineLabel: string | null;
  ratio: number | null;
  target: Target;
  pass: boolean | null;
  /** Per-repetition values and anything else worth keeping. */
  detail?: Record<string, unknown>;
}

export function figure(input: Omit<Figure, 'ratio' | 'pass'>): Figure {
  const ratio = input.baseline ? input.value / input.baseline : null;
  let pass: boolean | null = null;
  const t = input.target;
  if (t) {
    const subject = t.on === 'ratio' ? ratio : t.on === 'growth' ? (input.baseline === null ? null : input.value - input.baseline) : input.value;
    pass = subject === null || !Number.isFinite(subject) ? false : t.op === '>=' ? subject >= t.value : subject < t.value;
  }
  return { ...input, ratio, pass };
}

function fmt(value: number | null, unit = ''): string {
  if (value === null || !Number.isFinite(value)) return '–';
  const digits = Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : 2;
  return `${value.toFixed(digits)}${unit ? ` ${unit}` : ''}`;
}

function targetText(target: Target, unit: string): string {
  if (!target) return '–';
  if (target.on === 'ratio') return `ratio ${target.op} ${target.value}`;
  if (target.on === 'growth') return `${target.op} baseline + ${target.value} ${unit}`;
  return `${target.op} ${target.value} ${unit}`;
}

export function tableRows(figures: Figure[]): string[][] {
  return figures.map((f) => [
    f.label,
    fmt(f.value, f.unit),
    f.baseline === null ? '–' : `${fmt(f.baseline, f.unit)}${f.baselineLabel ? ` (${f.baselineLabel})` : ''}`,
    f.ratio === null ? '–' : f.ratio.toFixed(3),
    targetText(f.target, f.unit),
    f.pass === null ? '–' : f.pass ? 'PASS' : 'FAIL',
  ]);
}

const header = ['figure', 'value', 'baseline', 'ratio', 'target', 'result'];

export function textTable(figures: Figure[]): string {
  const rows = [header, ...tableRows(figures)];
  const widths = header.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((cell, i) => cell.padEnd(widths[i]!)).join('  ');
  return [line(rows[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.slice(1).map(line)].join('\n');
}

export function markdownTable(figures: Figure[]): string {
  const rows = tableRows(figures);
  return [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.map((c) => c.replaceAll('|', '\\|')).join(' | ')} |`)].join('\n');
}

/**
 * Replaces the text between `<!-- bench:start -->` and `<!-- bench:end -->` in `file`; when the markers
 * are missing, `fallback` decides where a new marked block goes.
 */
export function replaceBetweenMarkers(file: string, content: string, fallback: (text: string, block: string) => string): void {
  const start = '<!-- bench:start -->';
  const end = '<!-- bench:end -->';
  const block = `${start}\n${content.trim()}\n${end}`;
  const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  // Only markers on lines of their own count (prose may mention them).
  const from = /^<!-- bench:start -->$/m.exec(text)?.index ?? -1;
  const endMatch = /^<!-- bench:end -->$/m.exec(text.slice(Math.max(0, from)));
  const to = from >= 0 && endMatch ? from + endMatch.index : -1;
  const updated = from >= 0 && to > from ? text.slice(0, from) + block + text.slice(to + end.length) : fallback(text, block);
  fs.writeFileSync(file, updated);
}

export interface Results {
  generatedAt: string;
  totalSeconds: number;
  machine: { cpu: string; cores: number; memoryGiB: number; kernel: string; filesystem: string; node: string; sqlite: string; postgres?: unknown; wrk?: string };
  load: { atStart: { vitestProcesses: number; loadAverage: number[] }; atEnd: { vitestProcesses: number; loadAverage: number[] }; underLoad: boolean };
  settings: Record<string, unknown>;
  figures: Figure[];
  details: Record<string, unknown>;
}

/** The results block of docs/benchmarks.md and of README.md's Performance section. */
export function writeReports(root: string, results: Results): void {
  const m = results.machine;
  const start = results.load.atStart;
  const passed = results.figures.filter((f) => f.pass === true).length;
  const targeted = results.figures.filter((f) => f.pass !== null).length;
  const summary = [
    `Measured ${results.generatedAt.slice(0, 16).replace('T', ' ')} UTC by \`npm run bench\` (${results.totalSeconds.toFixed(0)} s) on ${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB RAM, ${m.kernel}, ${m.filesystem}; Node ${m.node}, SQLite ${m.sqlite}${m.postgres ? `, PostgreSQL ${String(m.postgres)}` : ''}${m.wrk ? `; load from wrk ${m.wrk}` : ''}.` +
      (results.load.underLoad
        ? ` **Taken under load**: other test runs were active on the machine (${start.vitestProcesses} vitest processes at the start, load average ${start.loadAverage.join(' / ')}).`
        : ` No test runs were active (load average at the start ${start.loadAverage.join(' / ')}).`),
    '',
    markdownTable(results.figures),
    '',
    `${passed} of ${targeted} targets met. Raw figures: \`bench/results.json\`.`,
  ].join('\n');
  replaceBetweenMarkers(path.join(root, 'docs', 'benchmarks.md'), summary, (text, block) => `${text.trimEnd()}\n\n## Results\n\n${block}\n`);
  replaceBetweenMarkers(path.join(root, 'README.md'), `${summary}\n\nMethod, machine and discussion: [docs/benchmarks.md](docs/benchmarks.md).`, (text, block) => {
    const section = `## Performance\n\n${block}\n\n`;
    const at = text.indexOf('## Documentation');
    return at >= 0 ? text.slice(0, at) + section + text.slice(at) : `${text.trimEnd()}\n\n${section}`;
  });
}
