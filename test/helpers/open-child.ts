// A child process that opens the database CHILD_DB (creating and migrating it when new) and exits,
// for tests that kill it or race several of it. It loads everything first, prints `ready`, and
// opens on a `go` line from standard input, so that several children can open at the same moment.
import { once } from 'node:events';
import { openStore } from '../../src/store/index.ts';

process.stdout.write('ready\n');
await once(process.stdin, 'data');
const store = await openStore(process.env.CHILD_DB!);
await store.close();
process.stdout.write('opened\n');
process.exit(0);
