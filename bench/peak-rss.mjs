// Preloaded (`node --import`) into each command line start the bench measures: when the process
// exits, writes its peak resident memory in KB (as `/usr/bin/time`'s %M) to BENCH_PEAK_RSS_TO.
// Plain JavaScript, and nothing else loaded: the command runs as users run it.
import { writeFileSync } from 'node:fs';

process.on('exit', () => writeFileSync(process.env.BENCH_PEAK_RSS_TO, String(process.resourceUsage().maxRSS)));
