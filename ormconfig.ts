// The data source the TypeORM CLI uses (npm run migration:run | migration:revert | migration:generate).
import 'dotenv/config';
import { DataSource } from 'typeorm';
import { buildDataSourceOptions } from './src/database/data-source-options';

export default new DataSource(
  buildDataSourceOptions({
    databaseUrl: process.env.DATABASE_URL || undefined,
    dataDir: process.env.DATA_DIR ?? './data',
  }),
);
