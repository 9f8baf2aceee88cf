// The @nestjs/swagger CLI plugin as a ts-jest AST transformer (the recipe of the Nest docs),
// with the options nest-cli.json gives it, so tests see the same OpenAPI document as the built app.
const transformer = require('@nestjs/swagger/plugin');
const nestCli = require('../../nest-cli.json');

const plugin = nestCli.compilerOptions.plugins.find(
  (p) => (typeof p === 'string' ? p : p.name) === '@nestjs/swagger',
);
if (!plugin) throw new Error('nest-cli.json does not list the @nestjs/swagger plugin');
const options = typeof plugin === 'string' ? {} : (plugin.options ?? {});

module.exports.name = 'nestjs-swagger-transformer';
// Part of ts-jest's cache key (as text): changed options in nest-cli.json recompile the tests.
module.exports.version = `2:${JSON.stringify(options)}`;
module.exports.factory = (compiler) => transformer.before(options, compiler.program);
