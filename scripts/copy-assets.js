// Copies non-TypeScript files the server reads at run time into dist (the model catalog data).
const { cpSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');
const assets = ['libs/integrations/src/catalog/data'];
for (const asset of assets) cpSync(join(root, asset), join(root, 'dist', asset), { recursive: true });
