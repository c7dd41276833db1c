-- Usage rows taken over by an activity note (Account/ClaimUsage): the id
-- of what claimed the row, NULL while unclaimed. A row is claimed once.
ALTER TABLE usage ADD COLUMN attributed_to text;
