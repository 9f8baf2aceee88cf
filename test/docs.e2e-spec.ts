import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';

/**
 * The docs a clone gets are the whole story (issue 30): no tracked file points at a path outside
 * the repository (the shared folder beside it, a machine's working directory), and every
 * relative link of the README, ROUTES.md and docs/ lands on a file that exists, and on a heading
 * of it when the link names one. Runs on the files as they are, no app.
 */
const ROOT = join(__dirname, '..');
const SELF = relative(ROOT, __filename);

/** What a path outside the repository looks like in our files. */
const OUTSIDE = [['..', 'shared', ''].join('/'), ['', 'work', ''].join('/')];

function trackedFiles(): string[] {
  const out = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 << 20 });
  return out.split('\0').filter((f) => f && existsSync(join(ROOT, f)) && statSync(join(ROOT, f)).isFile());
}

function text(file: string): string | undefined {
  const buffer = readFileSync(join(ROOT, file));
  return buffer.includes(0) ? undefined : buffer.toString('utf8');
}

/** The markdown without its fenced code blocks (links in code are examples, not links). */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}\- _]/gu, '')
    .replace(/ /g, '-');
}

function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const match of prose(markdown).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = slug(match[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n ? `${base}-${n}` : base);
  }
  return out;
}

describe('docs in the repository', () => {
  const files = trackedFiles();

  it('lists the tracked files', () => {
    expect(files).toEqual(expect.arrayContaining(['README.md', 'package.json']));
  });

  it('no tracked file mentions a path outside the repository', () => {
    const found: string[] = [];
    for (const file of files) {
      if (file === SELF) continue;
      const content = text(file);
      if (content === undefined) continue;
      content.split('\n').forEach((line, i) => {
        for (const outside of OUTSIDE) if (line.includes(outside)) found.push(`${file}:${i + 1}: ${outside}`);
      });
    }
    expect(found).toEqual([]);
  });

  it('every relative link of README.md, ROUTES.md and docs/ points at a file (and heading) that exists', () => {
    const pages = files.filter((f) => f === 'README.md' || f === 'ROUTES.md' || /^docs\/.*\.md$/.test(f));
    expect(pages).toEqual(expect.arrayContaining(['docs/api-guide.md', 'docs/contract/INDEX.md']));
    const broken: string[] = [];
    let checked = 0;
    for (const page of pages) {
      const markdown = readFileSync(join(ROOT, page), 'utf8');
      for (const match of prose(markdown).matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
        const target = match[1];
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
        checked++;
        const [path, anchor] = target.split('#', 2);
        const file = path ? normalize(join(dirname(page), decodeURIComponent(path))) : page;
        if (file.startsWith('..') || !existsSync(join(ROOT, file))) {
          broken.push(`${page}: ${target} (no file ${file})`);
          continue;
        }
        if (anchor && file.endsWith('.md') && !anchors(readFileSync(join(ROOT, file), 'utf8')).has(anchor)) {
          broken.push(`${page}: ${target} (no heading #${anchor} in ${file})`);
        }
      }
    }
    expect(broken).toEqual([]);
    expect(checked).toBeGreaterThan(20);
  });

  it('the architecture page draws its diagrams in Mermaid', () => {
    const architecture = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
    expect(architecture.match(/^```mermaid$/gm)?.length ?? 0).toBeGreaterThanOrEqual(3);
  });
});
