import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * What operators run (the image, `docker compose up`) agrees with what the tests run
 * (`npm start`, `npm run relay-agent`). No Docker engine runs here or in CI, so the files are
 * checked as files: the compose file by Debian's docker-compose against the Compose schema
 * (`docker-compose config`, which needs no engine; `.ci/run` installs it), the commands by
 * reading them.
 */
const ROOT = join(__dirname, '..');
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');
const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;

/** The node command a package.json script ends with (`npm run build && node x.js` → `node x.js`). */
const nodeCommandOf = (script: string) => script.split('&&').pop()!.trim().split(/\s+/);

/** The exec-form CMD of the Dockerfile's last stage. */
function imageCommand(): string[] {
  const commands = [...read('Dockerfile').matchAll(/^CMD\s+(\[.*\])\s*$/gm)];
  expect(commands.length).toBeGreaterThan(0);
  return JSON.parse(commands[commands.length - 1][1]) as string[];
}

/** The exec-form `command:` of a compose service, or undefined (the image's CMD). */
function composeCommand(service: string): string[] | undefined {
  const compose = read('docker-compose.yml');
  const start = compose.search(new RegExp(`^  ${service}:\\s*$`, 'm'));
  expect(start).toBeGreaterThanOrEqual(0);
  const block = compose.slice(start).split(/\n(?= {2}\S)/)[0];
  const command = /^ {4}command:\s*(\[.*\])\s*$/m.exec(block);
  return command ? (JSON.parse(command[1]) as string[]) : undefined;
}

describe('Deployment files', () => {
  it('the image starts the API as `npm start` does', () => {
    expect(imageCommand()).toEqual(nodeCommandOf(scripts.start));
    expect(imageCommand()).toEqual(['node', 'dist/main.js']);
  });

  it("the image's API listens on every interface of the container, in production", () => {
    const dockerfile = read('Dockerfile');
    const lastStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    // Its ENV instructions, continuation lines joined, as NAME=value pairs.
    const env = Object.fromEntries(
      [...lastStage.replace(/\\\n/g, ' ').matchAll(/^ENV\s+(.*)$/gm)]
        .flatMap((m) => m[1].trim().split(/\s+/))
        .map((pair) => pair.split('=') as [string, string]),
    );
    expect(env).toMatchObject({ NODE_ENV: 'production', HOST: '0.0.0.0' });
    expect(read('docs/operator-guide.md')).toContain('| `HOST` |');
  });

  it('the compose file runs the API with the image command and the relay agent as `npm run relay-agent` does', () => {
    expect(composeCommand('app')).toBeUndefined();
    expect(composeCommand('relay-agent')).toEqual(nodeCommandOf(scripts['relay-agent']));
    expect(scripts['policy-server']).toEqual(scripts['relay-agent']);
  });

  it('nothing is compiled at start: npm install builds once, the start commands run dist/ (quality.md)', () => {
    expect(scripts.prepare).toBe('npm run build');
    for (const name of ['start', 'relay-agent', 'policy-server', 'admin:create']) {
      expect({ name, script: scripts[name] }).toEqual({
        name,
        script: expect.stringMatching(/^node dist\/\S+\.js$/),
      });
      // The pre-script only says `npm run build` is missing; it never runs it.
      expect(`${name}: ${scripts[`pre${name}`] ?? ''}`).not.toMatch(/npm run build|nest build|\btsc\b/);
    }
    // The image installs without scripts (no sources yet for `prepare`), rebuilds the native
    // modules, then builds once with the sources: its CMD runs what that build made.
    const dockerfile = read('Dockerfile');
    expect(dockerfile).toMatch(/^RUN npm ci --ignore-scripts\b/m);
    expect(dockerfile).toMatch(/npm rebuild argon2 better-sqlite3/);
    expect(dockerfile.indexOf('COPY src')).toBeLessThan(dockerfile.indexOf('npm run build'));
  });

  it('every variable the compose file sets is one the service reads (docs/operator-guide.md environment table)', () => {
    const documented = read('docs/operator-guide.md');
    const compose = read('docker-compose.yml');
    const services = ['app', 'relay-agent'];
    for (const service of services) {
      const start = compose.search(new RegExp(`^  ${service}:\\s*$`, 'm'));
      const block = compose.slice(start).split(/\n(?= {2}\S)/)[0];
      const environment = /^ {4}environment:\n((?: {6}.*\n)+)/m.exec(`${block}\n`);
      expect(environment).not.toBeNull();
      const names = [...environment![1].matchAll(/^ {6}([A-Z_][A-Z0-9_]*):/gm)].map((m) => m[1]);
      expect(names.length).toBeGreaterThan(2);
      for (const name of names)
        expect({ name, documented: documented.includes(`\`${name}\``) }).toEqual({ name, documented: true });
    }
  });

  it("the image's Node.js is one LTS line in both stages, the line CI runs the suite on again", () => {
    const lines = [...read('Dockerfile').matchAll(/^FROM node:(\d+)-(\S+)/gm)].map((m) => `${m[1]}-${m[2]}`);
    expect(lines).toHaveLength(2);
    expect(new Set(lines).size).toBe(1);
    const major = Number(lines[0].split('-')[0]);
    // Even majors are the LTS lines; 24 is the oldest still maintained after Node 20's end of life.
    expect(major % 2).toBe(0);
    expect(major).toBeGreaterThanOrEqual(24);
    // .ci/run reads the line from the Dockerfile's last FROM, so the two cannot disagree.
    expect(read('.ci/run')).toContain("sed -n 's/^FROM node:\\([0-9][0-9]*\\)-.*/\\1/p' Dockerfile");
    expect(read('README.md')).toContain(`Node.js ${major}`);
  });

  const compose = spawnSync('docker-compose', ['version'], { encoding: 'utf8' });
  const haveCompose = compose.status === 0;
  // CI installs docker-compose (.ci/run); elsewhere the check runs when it is there.
  const composeCheck = haveCompose || process.env.CI ? it : it.skip;

  composeCheck('the compose file is valid Compose (docker-compose config, no engine needed)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'compose-check-'));
    try {
      copyFileSync(join(ROOT, 'docker-compose.yml'), join(dir, 'docker-compose.yml'));
      writeFileSync(join(dir, '.env'), '');
      const env = { ...process.env, POSTGRES_PASSWORD: 'check-only' };
      const config = execFileSync('docker-compose', ['-f', join(dir, 'docker-compose.yml'), 'config'], {
        env,
        encoding: 'utf8',
      });
      expect(config).toContain('relay-agent:');
      // The check itself refuses a broken file: a misspelt key is an error.
      writeFileSync(
        join(dir, 'docker-compose.yml'),
        read('docker-compose.yml').replace('    healthcheck:', '    helthcheck:'),
      );
      const broken = spawnSync('docker-compose', ['-f', join(dir, 'docker-compose.yml'), 'config', '-q'], {
        env,
        encoding: 'utf8',
      });
      expect(broken.status).not.toBe(0);
      expect(broken.stderr).toMatch(/helthcheck/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(existsSync(join(ROOT, 'Dockerfile'))).toBe(true);
  });
});
