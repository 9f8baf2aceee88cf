import { Module } from '@nestjs/common';

/** Sender domains: add, DNS records to publish, live verification, the daily re-check. */
@Module({})
export class DomainsModule {}
