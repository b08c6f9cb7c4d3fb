-- consumer-testing q22-isthmus_plan.json (Isthmus 2025) as its plan computes it: sql/q22.sql with sum and avg of
-- c_acctbal cast to the decimal(15,2) the plan declares (Calcite's), as tests/tpch_sql/ibm/q22.sql states IBM's.
-- The sorts' null order: bench/plan_sets.py (NullOrder.HIGH).
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
order by cntrycode
