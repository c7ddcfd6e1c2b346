-- Flink's sensor example as documented: readings arrive as CSV lines on a TCP socket.
-- Start a server first, for example `nc -lk 7777`, then run
--   streamsql -f queries/sensors_socket.sql
-- and type lines such as `sensor_1,1547718199,35.8` into nc. Ctrl-C stops the job.
-- The socket source is not replayable: results are at-most-once after a failure.
CREATE TABLE sensors (
  id STRING,
  ts BIGINT,
  temperature DOUBLE
) WITH (
  'connector' = 'socket',
  'hostname' = 'localhost',
  'port' = '7777',
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
