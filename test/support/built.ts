import { execFileSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

/** The newest modification time of the files under a directory (0 when it is empty). */
function newestUnder(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) newest = Math.max(newest, statSync(join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}

/**
 * The path of a compiled file of dist/ (e.g. 'cli/admin-create.js'), built first when it is
 * missing or older than a source file: specs that run a command run what `npm run` runs.
 * `npm install` builds dist/ once, so a clean checkout builds nothing here.
 */
export function builtFile(relative: string): string {
  const file = join(ROOT, 'dist', relative);
  let builtAt = 0;
  try {
    builtAt = statSync(file).mtimeMs;
  } catch {
    builtAt = 0;
  }
  if (builtAt < newestUnder(join(ROOT, 'src'))) {
    execFileSync(
      process.execPath,
      [join(ROOT, 'node_modules', '@nestjs', 'cli', 'bin', 'nest.js'), 'build'],
      {
        cwd: ROOT,
        stdio: 'ignore',
      },
    );
  }
  return file;
}
