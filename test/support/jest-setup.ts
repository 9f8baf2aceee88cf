// Every test process runs as NODE_ENV=test (quiet logs); each test app sets the rest of its environment.
process.env.NODE_ENV = 'test';
