-- 0050_update_room: room on each page of the tables whose rows the importer updates over and over, so that an
-- update of columns no index covers (balances, running values) stays on its page as a HOT update, with no new
-- entry in any index. With full pages (the default fill factor of 100) 6 % of the updates of entity were HOT
-- on the simulator's mix (a batch updates a row several times, and the dead versions of the batch cannot be
-- pruned before its commit), each of the others an entry in every index of entity (docs/performance.md,
-- "Room for updates"). Applies to pages written from now on.

ALTER TABLE entity SET (fillfactor = 70);
ALTER TABLE token_account SET (fillfactor = 80);
