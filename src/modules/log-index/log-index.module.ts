import { Module } from '@nestjs/common';
import { ElasticsearchModule, ElasticsearchService } from '@nestjs/elasticsearch';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AppConfig } from '../../config/app-config';
import { CleanLogRollUp } from './clean-log-roll-up';
import { ElasticsearchLogIndex } from './elasticsearch-log-index';
import { CleanLogDay } from './entities/clean-log-day.entity';
import { CleanLog } from './entities/clean-log.entity';
import { LogIndex } from './log-index';
import { SqlLogIndex } from './sql-log-index';

/**
 * The clean-log index (see LogIndex): Elasticsearch when ELASTICSEARCH_NODE is set, else SQL
 * tables of the service's database. The Elasticsearch client connects only when first used.
 */
@Module({
  imports: [
    TypeOrmModule.forFeature([CleanLog, CleanLogDay]),
    ElasticsearchModule.registerAsync({
      inject: [AppConfig],
      useFactory: (config: AppConfig) => ({
        node: config.env.ELASTICSEARCH_NODE ?? 'http://127.0.0.1:9200',
        requestTimeout: 10_000,
      }),
    }),
  ],
  providers: [
    CleanLogRollUp,
    SqlLogIndex,
    {
      provide: LogIndex,
      inject: [AppConfig, SqlLogIndex, ElasticsearchService],
      useFactory: async (
        config: AppConfig,
        sql: SqlLogIndex,
        es: ElasticsearchService,
      ): Promise<LogIndex> => {
        if (!config.env.ELASTICSEARCH_NODE) return sql;
        const index = new ElasticsearchLogIndex(es);
        await index.onModuleInit();
        return index;
      },
    },
  ],
  exports: [LogIndex],
})
export class LogIndexModule {}
