import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './free-port';

const run = promisify(execFile);

/** The directory of initdb and pg_ctl: the newest /usr/lib/postgresql/<version>/bin, else pg_config's. */
async function binDir(): Promise<string> {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions.length > 0) return join(root, versions[0], 'bin');
  return (await run('pg_config', ['--bindir'])).stdout.trim();
}

/**
 * A PostgreSQL cluster of a test's own: initdb in a temporary folder, a free port on 127.0.0.1,
 * its unix socket in that folder, trust authentication for `postgres`. Nothing else on the
 * machine is touched, so a test may stop and start it at will (an outage). PostgreSQL refuses to
 * run as root: as root the cluster belongs to the `postgres` OS user and runs as it.
 */
export class PgCluster {
  readonly url: string;

  private constructor(
    private readonly bin: string,
    private readonly dir: string,
    readonly port: number,
  ) {
    this.url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  }

  static async create(): Promise<PgCluster> {
    const bin = await binDir();
    const dir = mkdtempSync(join(tmpdir(), 'relay-pg-'));
    const cluster = new PgCluster(bin, dir, await freePort());
    if (process.getuid?.() === 0) {
      const { stdout } = await run('id', ['-u', 'postgres']);
      const gid = (await run('id', ['-g', 'postgres'])).stdout;
      chownSync(dir, Number(stdout), Number(gid));
    }
    await cluster.pg('initdb', [
      '-D',
      cluster.data,
      '-U',
      'postgres',
      '--auth=trust',
      '-E',
      'UTF8',
      '--no-sync',
    ]);
    await cluster.start();
    return cluster;
  }

  private get data(): string {
    return join(this.dir, 'data');
  }

  /** Starts the cluster and resolves once it accepts connections (pg_ctl -w). */
  async start(): Promise<void> {
    const options = [
      `-k ${this.dir}`,
      `-p ${this.port}`,
      '-h 127.0.0.1',
      // A test's data: no fsync (a stop, even an immediate one, loses nothing the OS was given).
      '-c fsync=off',
      '-c full_page_writes=off',
      '-c max_connections=100',
    ].join(' ');
    await this.pg('pg_ctl', [
      '-D',
      this.data,
      '-l',
      join(this.dir, 'log'),
      '-w',
      '-t',
      '60',
      '-o',
      options,
      'start',
    ]);
  }

  /**
   * Stops the cluster: `immediate` ends every backend at once, as a crash would (recovery at the
   * next start); `fast` rolls back open transactions and shuts down cleanly. Resolves once stopped.
   */
  async stop(mode: 'fast' | 'immediate' = 'immediate'): Promise<void> {
    await this.pg('pg_ctl', ['-D', this.data, '-w', '-t', '60', '-m', mode, 'stop']);
  }

  /** Stops the cluster if it runs and deletes its folder. */
  async destroy(): Promise<void> {
    await this.stop('immediate').catch(() => undefined);
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** Runs a PostgreSQL program, as `postgres` when this process is root. */
  private async pg(program: string, args: string[]): Promise<void> {
    const path = join(this.bin, program);
    const [file, argv] =
      process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', path, ...args]] : [path, args];
    try {
      await run(file, argv, { cwd: this.dir });
    } catch (e: unknown) {
      const { stderr, stdout } = e as { stderr?: string; stdout?: string };
      throw new Error(`${program} ${args.at(-1)} failed: ${stderr || stdout || String(e)}`);
    }
  }
}
