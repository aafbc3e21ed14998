// `got` for electronegativity during the scan: no network, every request fails at once.
'use strict';
const offline = () => Promise.reject(new Error('electron scan: offline by design, no network request is made'));
offline.head = offline;
offline.get = offline;
offline.default = offline;
module.exports = offline;
