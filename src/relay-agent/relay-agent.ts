import { INestApplicationContext, Logger } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { RelayDecisionService } from '../modules/internal/relay-decision.service';
import { MetricsService } from '../modules/metrics/metrics.service';
import { PolicyServer } from './policy/policy-server';
import { DataSource } from 'typeorm';
import { AgentHttpServer } from './agent-http-server';
import { MilterServer } from './milter/milter-server';
import { RelayMilterDecisions } from './relay-milter-decisions';
import { RelayAuthenticator } from './sasl/relay-authenticator';
import { SaslServer } from './sasl/sasl-server';

/** A protocol server of the agent, on its own port. */
export interface Listener {
  listen(port: number, host: string): Promise<number>;
  close(): Promise<void>;
}

export type ListenerName = 'policy' | 'sasl' | 'milter' | 'http';

/**
 * A port for each listener: a number, 0 for off, or `any` for a free one (tests). The HTTP
 * listener (`/health`, `/metrics`) is off when not given.
 */
export type ListenerPorts = Record<Exclude<ListenerName, 'http'>, number | 'any'> & { http?: number | 'any' };

export interface RunningRelayAgent {
  /** The port each listener that is on listens on. */
  ports: Partial<Record<ListenerName, number>>;
  /** Stops accepting, answers what was read, then resolves. */
  close(): Promise<void>;
}

/** Postfix's policy service answering from the application's relay decision. */
export function policyServer(app: INestApplicationContext): PolicyServer {
  const decisions = app.get(RelayDecisionService);
  return new PolicyServer((query) => decisions.decide(query));
}

/** SMTP AUTH answering from the application's relay credentials. */
export function saslServer(app: INestApplicationContext): SaslServer {
  const authenticator = app.get(RelayAuthenticator);
  return new SaslServer((attempt) => authenticator.authenticate(attempt));
}

/** DKIM signing and From alignment answering from the application's attribution and keys. */
export function milterServer(app: INestApplicationContext): MilterServer {
  const env = app.get(AppConfig).env;
  return new MilterServer(app.get(RelayMilterDecisions), {
    requireVerifiedDomain: env.RELAY_REQUIRE_VERIFIED_DOMAIN,
    smtpLineLengthLimit: env.SMTP_LINE_LENGTH_LIMIT,
  });
}

/** `GET /health` and `GET /metrics` of the agent (AGENT_HTTP_PORT). */
export function agentHttpServer(app: INestApplicationContext): AgentHttpServer {
  return new AgentHttpServer(
    app.get(MetricsService),
    app.get(DataSource),
    app.get(AppConfig).env.METRICS_TOKEN,
  );
}

/** The ports of the configuration (POLICY_PORT, SASL_PORT, MILTER_PORT, AGENT_HTTP_PORT; 0 turns a listener off). */
export function configuredPorts(config: AppConfig): ListenerPorts {
  const env = config.env;
  return { policy: env.POLICY_PORT, sasl: env.SASL_PORT, milter: env.MILTER_PORT, http: env.AGENT_HTTP_PORT };
}

/**
 * Starts the agent's listeners (integrations.md "Relay agent") on `host`, each on its port. The
 * listeners started before one that cannot listen are closed again before the error is thrown.
 */
export async function startRelayAgent(
  app: INestApplicationContext,
  host: string,
  ports: ListenerPorts,
): Promise<RunningRelayAgent> {
  const logger = new Logger('RelayAgent');
  const factories: Record<ListenerName, { label: string; create: () => Listener }> = {
    policy: { label: 'Postfix policy service', create: () => policyServer(app) },
    sasl: { label: 'SMTP AUTH (Dovecot protocol)', create: () => saslServer(app) },
    milter: { label: 'Milter (DKIM signing, From alignment)', create: () => milterServer(app) },
    http: { label: 'HTTP (/health, /metrics)', create: () => agentHttpServer(app) },
  };
  const running: Listener[] = [];
  const bound: RunningRelayAgent['ports'] = {};
  const close = async () => {
    await Promise.all(running.map((listener) => listener.close()));
  };
  try {
    for (const name of Object.keys(factories) as ListenerName[]) {
      const port = ports[name] ?? 0;
      if (port === 0) continue;
      const listener = factories[name].create();
      bound[name] = await listener.listen(port === 'any' ? 0 : port, host);
      running.push(listener);
      logger.log(`${factories[name].label} listening on ${host}:${bound[name]}`);
    }
  } catch (e) {
    await close();
    throw e;
  }
  return { ports: bound, close };
}
