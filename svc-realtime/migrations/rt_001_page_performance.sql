-- page-performance state of svc-realtime: the 24-hour result cache shared
-- by every user, and the daily counters behind its quotas. Times are Unix
-- milliseconds; days are UTC.

CREATE TABLE rt_psi_cache (
    url        text NOT NULL,                 -- exactly as requested
    strategy   text NOT NULL CHECK (strategy IN ('mobile', 'desktop')),
    result     jsonb NOT NULL,                -- Page performance object without cached_at
    cached_at  bigint NOT NULL,               -- when the result was produced
    PRIMARY KEY (url, strategy)
);

-- Calls per person (the gateway's seo-user-id) per day, cache hits and
-- failed runs included.
CREATE TABLE rt_psi_user_calls (
    day      date NOT NULL,
    user_id  text NOT NULL,
    calls    integer NOT NULL CHECK (calls >= 0),
    PRIMARY KEY (day, user_id)
);

-- Uncached upstream attempts of the whole service per day.
CREATE TABLE rt_psi_attempts (
    day       date PRIMARY KEY,
    attempts  integer NOT NULL CHECK (attempts >= 0)
);
