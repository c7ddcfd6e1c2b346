package parser_test

import (
	"fmt"

	"github.com/streamsql/streamsql/parser"
)

func ExampleParse() {
	script, err := parser.Parse(`
		create table clicks (user_id bigint, url string, ts timestamp(3),
		  watermark for ts as ts - interval '5' second) with ('connector' = 'datagen');
		select user_id, count(*) cnt from clicks where url like '%/buy' group by user_id`)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(script)
	// Output:
	// CREATE TABLE clicks (
	//   user_id BIGINT,
	//   url STRING,
	//   ts TIMESTAMP(3),
	//   WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
	// ) WITH (
	//   'connector' = 'datagen'
	// );
	// SELECT user_id, COUNT(*) AS cnt FROM clicks WHERE url LIKE '%/buy' GROUP BY user_id
}

func ExampleParse_error() {
	_, err := parser.Parse("SELECT user_id,\n       count(*) FORM clicks")
	fmt.Println(err)
	// Output:
	// 2:17: unexpected "FORM", expected FROM
	//        count(*) FORM clicks
	//                 ^
}

func ExampleParseExpr() {
	e, err := parser.ParseExpr("trim(leading '0' from code) != 'x' or not a between 1 and 2")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%T\n%s\n", e, e)
	// Output:
	// *parser.BinaryExpr
	// TRIM(LEADING '0' FROM code) <> 'x' OR NOT a BETWEEN 1 AND 2
}

func ExampleComplete() {
	fmt.Println(parser.Complete("SELECT ';'"))
	fmt.Println(parser.Complete("SELECT ';'; -- done"))
	// Output:
	// false
	// true
}
