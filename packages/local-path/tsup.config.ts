import { binaryBundle } from '@kprov/provisioner-lib/bundle';
import { defineConfig } from 'tsup';
import { libraryAndBinary } from '../../tsup.binary.js';

export default defineConfig(libraryAndBinary(binaryBundle({ cli: 'src/cli.ts' })));
