import 'dotenv/config';
import { Logger } from 'nestjs-pino';
import { NestFactory } from '@nestjs/core';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { AppModule } from './app.module';
import { AppConfig, ConfigurationError } from './config/app-config';
import { configureApp, createFastifyAdapter, NEST_APP_OPTIONS } from './configure-app';

async function bootstrap(): Promise<void> {
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule,
    createFastifyAdapter(),
    NEST_APP_OPTIONS,
  );
  await configureApp(app);
  const port = app.get(AppConfig).env.PORT;
  await app.listen(port, '0.0.0.0');
  app.get(Logger).log(`Listening on port ${port}; API docs at /api-docs`, 'Bootstrap');
}

bootstrap().catch((error: unknown) => {
  if (error instanceof ConfigurationError) {
    process.stderr.write(`${error.message}\n`);
  } else {
    process.stderr.write(
      `Failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
  }
  process.exit(1);
});
