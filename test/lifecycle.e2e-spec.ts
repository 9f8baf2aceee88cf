import { ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { AddressInfo, createServer } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { TEST_SECRETS } from './support/test-app';

/** The real entry point (src/main.ts) as a child process: start-up validation and SIGTERM. */
describe('Process lifecycle', () => {
  let dataDir: string;

  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'relay-lifecycle-'));
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  function start(
    env: Record<string, string>,
    dir = dataDir,
  ): {
    child: ChildProcess;
    output: () => string;
    /** Resolves once the output contains `text`; rejects if the process exits before. */
    printed: (text: string) => Promise<void>;
  } {
    let output = '';
    const child = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', 'src/main.ts'], {
      cwd: join(__dirname, '..'),
      env: { PATH: process.env.PATH, DATA_DIR: dir, LOG_LEVEL: 'info', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const seen: Array<() => void> = [];
    const append = (d: Buffer) => {
      output += d.toString();
      seen.splice(0).forEach((check) => check());
    };
    child.stdout?.on('data', append);
    child.stderr?.on('data', append);
    const printed = (text: string) =>
      new Promise<void>((resolve, reject) => {
        const check = () => (output.includes(text) ? resolve() : seen.push(check));
        child.once('exit', (code) =>
          reject(new Error(`exited (${code}) before printing "${text}":\n${output}`)),
        );
        check();
      });
    return { child, output: () => output, printed };
  }

  const exitOf = (child: ChildProcess) =>
    new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

  it('refuses to start in production without strong, distinct secrets, listing what is wrong', async () => {
    const { child, output } = start({ NODE_ENV: 'production', JWT_ACCESS_SECRET: 'short' });
    expect(await exitOf(child)).toBe(1);
    expect(output()).toContain('Invalid configuration');
    expect(output()).toContain('JWT_ACCESS_SECRET must be at least 32 characters long');
    expect(output()).toContain('JWT_REFRESH_SECRET is required in production');
    expect(output()).toContain('ENCRYPTION_KEY is required in production');
    expect(output()).not.toMatch(/\n\s+at /); // a list of problems, not a stack trace
    expect(existsSync(join(dataDir, 'development-secrets.env'))).toBe(false); // none generated, none kept
  }, 30000);

  it('serves, then on SIGTERM stops accepting, closes the database and exits 0', async () => {
    const port = await freePort();
    const { child, output, printed } = start({
      NODE_ENV: 'development',
      PORT: String(port),
      ...TEST_SECRETS,
    });
    const exited = exitOf(child);
    await printed(`Listening on http://127.0.0.1:${port}; API docs at http://127.0.0.1:${port}/api-docs`);
    expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200);
    const live = await fetch(`http://127.0.0.1:${port}/health/live`);
    expect(live.status).toBe(200);
    expect(await live.json()).toEqual({
      status: 'success',
      code: 200,
      msg: 'Service is alive',
      data: { status: 'ok' },
    });

    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(output()).toContain('SIGTERM received');
    await expect(fetch(`http://127.0.0.1:${port}/health/live`)).rejects.toThrow();
  }, 40000);

  it('outside production, keeps generated secrets in DATA_DIR (0600) for the next start, and binds loopback', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'relay-lifecycle-secrets-'));
    const file = join(dir, 'development-secrets.env');
    const admin = { ADMIN_EMAIL: 'first@relay.test', ADMIN_PASSWORD: 'first-admin-password' };
    const env = { NODE_ENV: 'development', JWT_ACCESS_TTL: '1h', ...admin };
    try {
      // First start: no secret in the environment; an admin logs in.
      const port = await freePort();
      const first = start({ ...env, PORT: String(port) }, dir);
      const firstExit = exitOf(first.child);
      await first.printed(`Listening on http://127.0.0.1:${port}`);
      // The last line of the start repeats where the secrets are kept.
      expect(first.output()).toMatch(
        /Listening on .*api-docs\. Secrets not set in the environment .* are kept in /,
      );
      expect(first.output()).toContain(file);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      const kept = readFileSync(file, 'utf8');
      for (const secret of kept.matchAll(/^[A-Z_]+=(.+)$/gm)) expect(first.output()).not.toContain(secret[1]);
      // Not reachable on the machine's other addresses (HOST defaults to 127.0.0.1).
      const lan = Object.values(networkInterfaces())
        .flat()
        .find((a) => a && a.family === 'IPv4' && !a.internal);
      if (lan) await expect(fetch(`http://${lan.address}:${port}/health/live`)).rejects.toThrow();
      const login = await fetch(`http://127.0.0.1:${port}/api/v1/admins/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: admin.ADMIN_EMAIL, password: admin.ADMIN_PASSWORD }),
      });
      expect(login.status).toBe(200);
      const { accessToken } = ((await login.json()) as { data: { accessToken: string } }).data;
      first.child.kill('SIGTERM');
      expect(await firstExit).toBe(0);

      // Second start on the same DATA_DIR: the same secrets, so the token still holds.
      const second = start({ ...env, PORT: String(port) }, dir);
      const secondExit = exitOf(second.child);
      await second.printed(`Listening on http://127.0.0.1:${port}`);
      expect(readFileSync(file, 'utf8')).toBe(kept);
      const me = await fetch(`http://127.0.0.1:${port}/api/v1/admins/me`, {
        headers: { authorization: `Bearer ${accessToken}` },
      });
      expect(me.status).toBe(200);
      second.child.kill('SIGTERM');
      expect(await secondExit).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90000);
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
