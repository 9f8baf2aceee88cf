import { Injectable } from '@nestjs/common';
import { Resolver } from 'node:dns/promises';
import { AppConfig } from '../../config/app-config';
import {
  checkDkim,
  checkDmarc,
  checkOwnership,
  checkReturnPath,
  checkSpf,
  CheckResult,
  Lookup,
} from './dns-records';
import type { DnsRecord, Domain } from './entities/domain.entity';

/**
 * Live DNS checks of a domain's records, through `node:dns/promises` with the resolvers of
 * DNS_SERVERS (the system's when unset). Never throws: what DNS could not answer is a record
 * status. Each query is bounded to DNS_TIMEOUT_MS (integrations.md "DNS": 5 s); no answer in
 * time is `missing` "DNS timeout".
 */
@Injectable()
export class DomainDnsChecker {
  constructor(private readonly config: AppConfig) {}

  /** The domain's records with the result of one live check each (the queries run in parallel). */
  async check(domain: Pick<Domain, 'verificationToken' | 'dkimPublicKey' | 'records'>): Promise<DnsRecord[]> {
    const timeoutMs = this.config.env.DNS_TIMEOUT_MS;
    const resolver = new Resolver({ timeout: timeoutMs, tries: 1 });
    const ask = <T>(query: () => Promise<T[]>) => lookup(timeoutMs, query);
    const servers = this.config.dnsServers;
    if (servers) resolver.setServers(servers);
    const env = this.config.env;
    const checkedAt = new Date().toISOString();
    try {
      return await Promise.all(
        domain.records.map(async (record): Promise<DnsRecord> => {
          let result: CheckResult;
          switch (record.purpose) {
            case 'ownership':
              result = checkOwnership(
                await ask(() => resolver.resolveTxt(record.host)),
                domain.verificationToken,
              );
              break;
            case 'spf':
              result = checkSpf(await ask(() => resolver.resolveTxt(record.host)), env.SPF_INCLUDE);
              break;
            case 'dkim':
              result = checkDkim(await ask(() => resolver.resolveTxt(record.host)), domain.dkimPublicKey);
              break;
            case 'dmarc':
              result = checkDmarc(await ask(() => resolver.resolveTxt(record.host)));
              break;
            case 'return-path':
              result = checkReturnPath(await ask(() => resolver.resolveCname(record.host)), record.value);
              break;
          }
          return { ...record, ...result, checkedAt };
        }),
      );
    } finally {
      resolver.cancel();
    }
  }
}

/** One query, its failure modes turned into values; a hard bound on top of c-ares' own timeout. */
async function lookup<T>(timeoutMs: number, query: () => Promise<T[]>): Promise<Lookup<T>> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<Lookup<T>>((resolve) => {
    timer = setTimeout(() => resolve({ timeout: true }), timeoutMs + 500);
  });
  try {
    return await Promise.race([
      query().then(
        (answers): Lookup<T> => ({ answers }),
        (e: NodeJS.ErrnoException): Lookup<T> => {
          if (e.code === 'ENOTFOUND' || e.code === 'ENODATA') return { none: true };
          if (e.code === 'ETIMEOUT' || e.code === 'ECANCELLED') return { timeout: true };
          return { error: e.code ?? e.message };
        },
      ),
      bound,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
