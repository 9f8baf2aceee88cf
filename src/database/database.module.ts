import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config';
import { ChangeNotices } from './change-notices';
import { buildDataSourceOptions } from './data-source-options';
import { DatabaseRuntime } from './database-runtime';
import { PostgresRuntime } from './postgres/postgres-runtime';
import { SqlDialect } from './sql-dialect';
import { SqliteRuntime } from './sqlite/sqlite-runtime';
import { TransactionService } from './transaction.service';

/** The engine's adapter for a data source: PostgreSQL's, or the embedded SQLite's (which keeps its file in shape while the application runs). */
export function createDatabaseRuntime(dataSource: DataSource): DatabaseRuntime {
  return dataSource.options.type === 'postgres'
    ? new PostgresRuntime(dataSource)
    : new SqliteRuntime(dataSource);
}

@Global()
@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      inject: [AppConfig],
      useFactory: (config: AppConfig) => ({
        ...buildDataSourceOptions({ databaseUrl: config.env.DATABASE_URL, dataDir: config.dataDir }),
        // Start even when the database is down: /health answers 503 and requests recover by themselves.
        retryAttempts: config.isProduction ? 10 : 0,
      }),
    }),
  ],
  providers: [
    { provide: DatabaseRuntime, inject: [DataSource], useFactory: createDatabaseRuntime },
    TransactionService,
    SqlDialect,
    ChangeNotices,
  ],
  exports: [DatabaseRuntime, TransactionService, SqlDialect, ChangeNotices],
})
export class DatabaseModule {}
