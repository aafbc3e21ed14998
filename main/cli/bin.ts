#!/usr/bin/env node
// The `chatty-gateway` executable: plain Node, no Electron.
import { main } from './main.js';

process.exitCode = await main(process.argv.slice(2));
