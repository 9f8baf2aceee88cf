import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AppConfig } from '../../config/app-config';
import { CleanLogRollUp } from './clean-log-roll-up';
import { ElasticsearchLogIndex } from './elasticsearch-log-index';
import { CleanLogDay } from './entities/clean-log-day.entity';
import { CleanLog } from './entities/clean-log.entity';
import { LogIndex } from './log-index';
import { SqlLogIndex } from './sql-log-index';

/**
 * The clean-log index (see LogIndex): Elasticsearch when ELASTICSEARCH_NODE is set, its template
 * installed, else SQL tables of the service's database. The Elasticsearch client is loaded only
 * then: loading it was a fifth of the service's start.
 */
export async function chooseLogIndex(
  elasticsearchNode: string | undefined,
  sql: SqlLogIndex,
): Promise<LogIndex> {
  if (!elasticsearchNode) return sql;
  const { ElasticsearchService } = await import('@nestjs/elasticsearch');
  const index = new ElasticsearchLogIndex(
    new ElasticsearchService({ node: elasticsearchNode, requestTimeout: 10_000 }),
  );
  await index.installTemplate();
  return index;
}

/** The clean-log index of chooseLogIndex, for the ingest and the reports. */
@Module({
  imports: [TypeOrmModule.forFeature([CleanLog, CleanLogDay])],
  providers: [
    CleanLogRollUp,
    SqlLogIndex,
    {
      provide: LogIndex,
      inject: [AppConfig, SqlLogIndex],
      useFactory: (config: AppConfig, sql: SqlLogIndex) => chooseLogIndex(config.env.ELASTICSEARCH_NODE, sql),
    },
  ],
  exports: [LogIndex],
})
export class LogIndexModule {}
