import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { connect } from 'node:net';

/**
 * A stock Postfix on this machine (see ../shared/postfix.md), configured with `postconf -e` for
 * one test: loopback only, every recipient relayed to `relayPort` on loopback, and the relay
 * restrictions delegated to the policy service on `policyPort`.
 */
export const POSTFIX_LOG = '/var/log/postfix.log';

/** Postfix and swaks are installed (`.ci/run` installs them) and we may run them (root). */
export function postfixAvailable(): { ok: true } | { ok: false; why: string } {
  for (const program of ['postfix', 'postconf', 'swaks']) {
    if (spawnSync('which', [program]).status !== 0) return { ok: false, why: `${program} is not installed` };
  }
  if (process.getuid?.() !== 0) return { ok: false, why: 'Postfix listens on port 25, which needs root' };
  return { ok: true };
}

/**
 * `saslPort` and `milterPort`: the relay agent's SMTP AUTH and milter listeners, with the
 * main.cf lines the README gives (AUTH without TLS here: loopback only).
 */
export async function startPostfix(options: {
  policyPort: number;
  relayPort: number;
  saslPort?: number;
  milterPort?: number;
}): Promise<void> {
  const agent: Record<string, string> = {};
  if (options.saslPort) {
    Object.assign(agent, {
      smtpd_sasl_type: 'dovecot',
      smtpd_sasl_path: `inet:127.0.0.1:${options.saslPort}`,
      smtpd_sasl_auth_enable: 'yes',
      smtpd_tls_auth_only: 'no',
    });
  }
  if (options.milterPort) {
    Object.assign(agent, {
      smtpd_milters: `inet:127.0.0.1:${options.milterPort}`,
      non_smtpd_milters: '$smtpd_milters',
      milter_default_action: 'tempfail',
      disable_mime_output_conversion: 'yes',
      local_header_rewrite_clients: 'permit_mynetworks, permit_sasl_authenticated',
    });
  }
  // main.cf keeps what an earlier run wrote: the agent's lines are set or removed each time.
  const agentNames = [
    'smtpd_sasl_type',
    'smtpd_sasl_path',
    'smtpd_sasl_auth_enable',
    'smtpd_tls_auth_only',
    'smtpd_milters',
    'non_smtpd_milters',
    'milter_default_action',
    'disable_mime_output_conversion',
    'local_header_rewrite_clients',
  ];
  const unset = agentNames.filter((name) => !(name in agent));
  if (unset.length) spawnSync('postconf', ['-X', ...unset]);
  postconf({
    ...agent,
    // The relay agent's test sends a 25 MB message.
    message_size_limit: '30000000',
    maillog_file: POSTFIX_LOG,
    relayhost: `[127.0.0.1]:${options.relayPort}`,
    mynetworks: '127.0.0.0/8',
    inet_interfaces: 'loopback-only',
    inet_protocols: 'ipv4',
    myhostname: 'relay.test',
    mydestination: '',
    smtp_tls_security_level: 'none',
    compatibility_level: '3.6',
    smtpd_relay_restrictions: `check_policy_service inet:127.0.0.1:${options.policyPort}, reject`,
    // One recipient of an open transaction refused by Postfix itself: logged as `QID: reject: RCPT`.
    smtpd_recipient_restrictions: 'reject_non_fqdn_recipient',
    // Answers of the policy service are not cached between tests' messages.
    smtpd_policy_service_reuse_count_limit: '1',
  });
  const running = spawnSync('postfix', ['status']).status === 0;
  // A restart rather than a reload: inet_interfaces changes need one.
  if (running) execFileSync('postfix', ['stop'], { stdio: 'ignore' });
  // An empty queue: mail an earlier run left deferred would reach this run's sink first.
  spawnSync('postsuper', ['-d', 'ALL'], { stdio: 'ignore' });
  execFileSync('postfix', ['start'], { stdio: 'ignore' });
  await waitForPort(25);
}

export function stopPostfix(): void {
  if (spawnSync('postfix', ['status']).status === 0) execFileSync('postfix', ['stop'], { stdio: 'ignore' });
}

/** Asks Postfix to deliver its queue now instead of at its next scan. */
export function flushQueue(): void {
  spawnSync('postqueue', ['-f']);
}

export interface SwaksResult {
  code: number | null;
  /** swaks' transcript (what the client sent and what Postfix answered). */
  transcript: string;
}

/**
 * Sends one message with swaks to Postfix on 127.0.0.1:25 (`to`: one address, or several
 * separated by commas; `extra`: more swaks options). Asynchronous on purpose: the policy
 * server answering Postfix may run in this very process.
 */
export function swaks(from: string, to: string, subject: string, extra: string[] = []): Promise<SwaksResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('swaks', [
      '--server',
      '127.0.0.1:25',
      '--from',
      from,
      '--to',
      to,
      '--header',
      `Subject: ${subject}`,
      '--body',
      'Hello from the relay test.',
      '--timeout',
      '20',
      ...extra,
    ]);
    let transcript = '';
    child.stdout.on('data', (d: Buffer) => (transcript += d.toString()));
    child.stderr.on('data', (d: Buffer) => (transcript += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, transcript }));
  });
}

function postconf(settings: Record<string, string>): void {
  execFileSync('postconf', ['-e', ...Object.entries(settings).map(([k, v]) => `${k}=${v}`)], {
    stdio: 'ignore',
  });
}

async function waitForPort(port: number): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`Postfix does not listen on port ${port}`);
    // A peer: Postfix's master daemon, detached by `postfix start`, tells no one when it listens;
    // trying to connect is the only way to know, every 200 ms until it accepts.
    await new Promise((r) => setTimeout(r, 200));
  }
}
