import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AppConfig } from '../config/app-config';
import { ChangeNotices } from './change-notices';
import { buildDataSourceOptions } from './data-source-options';
import { SqlDialect } from './sql-dialect';
import { SqliteCheckpoints } from './sqlite-checkpoints';
import { TransactionService } from './transaction.service';

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
  providers: [TransactionService, SqlDialect, ChangeNotices, SqliteCheckpoints],
  exports: [TransactionService, SqlDialect, ChangeNotices],
})
export class DatabaseModule {}
