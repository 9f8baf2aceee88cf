import { ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TEST_SECRETS } from './support/test-app';

/** The real entry point (src/main.ts) as a child process: start-up validation and SIGTERM. */
describe('Process lifecycle', () => {
  let dataDir: string;

  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'relay-lifecycle-'));
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  function start(env: Record<string, string>): {
    child: ChildProcess;
    output: () => string;
    /** Resolves once the output contains `text`; rejects if the process exits before. */
    printed: (text: string) => Promise<void>;
  } {
    let output = '';
    const child = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', 'src/main.ts'], {
      cwd: join(__dirname, '..'),
      env: { PATH: process.env.PATH, DATA_DIR: dataDir, LOG_LEVEL: 'info', ...env },
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
  }, 30000);

  it('serves, then on SIGTERM stops accepting, closes the database and exits 0', async () => {
    const port = await freePort();
    const { child, output, printed } = start({
      NODE_ENV: 'development',
      PORT: String(port),
      ...TEST_SECRETS,
    });
    const exited = exitOf(child);
    await printed(`Listening on port ${port}`);
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
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
