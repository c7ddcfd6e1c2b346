-- Flink's sensor example on a file: the highest temperature and the number of readings
-- per sensor, as a continuously updated result printed as a changelog.
-- Run from the repository root: streamsql -f queries/sensors.sql
CREATE TABLE sensors (
  id STRING,
  ts BIGINT,
  temperature DOUBLE
) WITH (
  'connector' = 'filesystem',
  'path' = 'queries/data/sensors.csv',
  'format' = 'csv'
);

CREATE TABLE sensor_stats (
  id STRING,
  max_temp DOUBLE,
  cnt BIGINT
) WITH (
  'connector' = 'print'
);

INSERT INTO sensor_stats
SELECT id, MAX(temperature) AS max_temp, COUNT(*) AS cnt
FROM sensors
GROUP BY id;
