-- IBM compliance suite q22 as its plan computes it (Isthmus/Calcite's reading of the TPC-H text, tpch_sql/standard/q22.sql): the plan's decimal
-- literals (1.00), each product or difference cast to the type the plan declares (Calcite caps decimal
-- precision at 19: decimal(19,4), not Spark's decimal(31,4)) and its sorts' null order (cntrycode ASC NULLS LAST).
-- Calcite declares sum and avg of decimal(15,2) as decimal(15,2).
-- As in the TPC-H text, a derived table stands under the aggregate: the plan's projection below its
-- AggregateRel computes a grouping key, and Spark SQL evaluates that projection in a Project of its own.
select cntrycode, count(*) as numcust, cast(sum(c_acctbal) as decimal(15,2)) as totacctbal
from (
    select substring(c_phone, 1, 2) as cntrycode, c_acctbal
    from customer
    where substring(c_phone, 1, 2) in ('13', '31', '23', '29', '30', '18', '17')
        and c_acctbal > (
            select cast(avg(c_acctbal) as decimal(15,2)) as avg_balance
            from customer
            where c_acctbal > 0.00
                and substring(c_phone, 1, 2) in ('13', '31', '23', '29', '30', '18', '17'))
        and not exists (select * from orders where o_custkey = c_custkey)
) as custsale
group by cntrycode
order by cntrycode asc nulls last
