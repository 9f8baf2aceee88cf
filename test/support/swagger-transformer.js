// The @nestjs/swagger CLI plugin as a ts-jest AST transformer (the recipe of the Nest docs),
// with the options of nest-cli.json, so tests see the same OpenAPI document as the built app.
const transformer = require('@nestjs/swagger/plugin');

module.exports.name = 'nestjs-swagger-transformer';
module.exports.version = 1;
module.exports.factory = (compiler) =>
  transformer.before(
    { classValidatorShim: true, introspectComments: true, dtoFileNameSuffix: ['.dto.ts'] },
    compiler.program,
  );
