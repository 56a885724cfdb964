import { defineConfig } from 'tsup';
import { libraryAndBinary } from '../../tsup.binary.js';

export default defineConfig(libraryAndBinary({ cli: 'src/cli.ts' }));
