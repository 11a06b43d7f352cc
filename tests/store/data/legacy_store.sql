BEGIN TRANSACTION;
CREATE TABLE attempts (
            run_id TEXT NOT NULL, config TEXT NOT NULL, problem TEXT NOT NULL, repeat INTEGER NOT NULL,
            idx INTEGER NOT NULL, origin TEXT NOT NULL, code TEXT, response TEXT NOT NULL, feedback TEXT,
            parse_error TEXT, confidence REAL, prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL,
            cached_tokens INTEGER NOT NULL, estimated INTEGER NOT NULL, cost_usd REAL, latency_s REAL NOT NULL,
            cached INTEGER NOT NULL, visible_passed INTEGER, visible_pass_count INTEGER, visible_outcomes TEXT,
            hidden_passed INTEGER NOT NULL, hidden_pass_count INTEGER NOT NULL, hidden_total INTEGER NOT NULL,
            hidden_outcomes TEXT, isolation TEXT,
            PRIMARY KEY (run_id, config, problem, repeat, idx)
        );
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','d5c1fe146e','jsonl/p0',0,0,'draft','def f(x): # ok
    return x + 0
','```python
def f(x): # ok
    return x + 0
```',NULL,NULL,NULL,39,10,0,0,NULL,5.38137190999918857414e-01,0,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','d5c1fe146e','jsonl/p0',1,0,'draft','def f(x): # ok
    return x + 0
','```python
def f(x): # ok
    return x + 0
```',NULL,NULL,NULL,39,10,0,0,NULL,1.54329437999990659591e-01,0,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','d5c1fe146e','jsonl/p1',0,0,'draft','def f(x):
    return x + 1 if x < 5 else 0
','```python
def f(x):
    return x + 1 if x < 5 else 0
```',NULL,NULL,NULL,39,14,0,0,NULL,1.94956301999923198309e-01,0,1,1,'[{"verdict": "pass"}]',0,1,2,'[{"verdict": "pass"}, {"verdict": "fail", "message": "f(10): expected 11, got 0", "expected": "11", "actual": "0"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','d5c1fe146e','jsonl/p1',1,0,'draft','def f(x):
    return x + 1 if x < 5 else 0
','```python
def f(x):
    return x + 1 if x < 5 else 0
```',NULL,NULL,NULL,39,14,0,0,NULL,2.12257858999919335474e-01,0,1,1,'[{"verdict": "pass"}]',0,1,2,'[{"verdict": "pass"}, {"verdict": "fail", "message": "f(10): expected 11, got 0", "expected": "11", "actual": "0"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','d5c1fe146e','jsonl/p2',0,0,'draft','def f(x): # ok
    return x + 2
','```python
def f(x): # ok
    return x + 2
```',NULL,NULL,NULL,39,10,0,0,NULL,2.23119159000020772509e-01,0,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','d5c1fe146e','jsonl/p3',0,0,'draft','def f(x):
    return x + 3
','```python
def f(x):
    return x + 3
```',NULL,NULL,NULL,39,8,0,0,NULL,2.25801048999983322573e-01,0,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','d5c1fe146e','jsonl/p2',1,0,'draft','def f(x): # ok
    return x + 2
','```python
def f(x): # ok
    return x + 2
```',NULL,NULL,NULL,39,10,0,0,NULL,2.17040579000013167387e-01,0,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','d5c1fe146e','jsonl/p3',1,0,'draft','def f(x):
    return x + 3
','```python
def f(x):
    return x + 3
```',NULL,NULL,NULL,39,8,0,0,NULL,2.33008847000064633903e-01,0,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','ce595b23df','jsonl/p0',0,0,'draft','def f(x): # ok
    return x + 0
','```python
def f(x): # ok
    return x + 0
```',NULL,NULL,NULL,39,10,0,0,5.9e-05,0.193646694999984,0,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','ce595b23df','jsonl/p0',1,0,'draft','def f(x): # ok
    return x + 0
','```python
def f(x): # ok
    return x + 0
```',NULL,NULL,NULL,39,10,0,0,5.9e-05,4.01294810000081270118e-02,0,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','ce595b23df','jsonl/p3',0,0,'draft','def f(x):
    return x + 3
','```python
def f(x):
    return x + 3
```',NULL,NULL,NULL,39,8,0,0,5.5e-05,2.49651209999228740343e-02,0,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','ce595b23df','jsonl/p1',1,0,'draft','def f(x):
    return x + 1 if x < 5 else 0
','```python
def f(x):
    return x + 1 if x < 5 else 0
```',NULL,NULL,NULL,39,14,0,0,6.7e-05,0.0391516470000397,0,1,1,'[{"verdict": "pass"}]',0,1,2,'[{"verdict": "pass"}, {"verdict": "fail", "message": "f(10): expected 11, got 0", "expected": "11", "actual": "0"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','ce595b23df','jsonl/p2',0,0,'draft','def f(x): # ok
    return x + 2
','```python
def f(x): # ok
    return x + 2
```',NULL,NULL,NULL,39,10,0,0,5.9e-05,2.09919889999810038716e-02,0,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','ce595b23df','jsonl/p2',1,0,'draft','def f(x): # ok
    return x + 2
','```python
def f(x): # ok
    return x + 2
```',NULL,NULL,NULL,39,10,0,0,5.9e-05,3.94534129999328797566e-02,0,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','ce595b23df','jsonl/p1',0,0,'draft','def f(x):
    return x + 1 if x < 5 else 0
','```python
def f(x):
    return x + 1 if x < 5 else 0
```',NULL,NULL,NULL,39,14,0,0,6.7e-05,4.07088969999449545866e-02,0,1,1,'[{"verdict": "pass"}]',0,1,2,'[{"verdict": "pass"}, {"verdict": "fail", "message": "f(10): expected 11, got 0", "expected": "11", "actual": "0"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','ce595b23df','jsonl/p3',1,0,'draft','def f(x):
    return x + 3
','```python
def f(x):
    return x + 3
```',NULL,NULL,NULL,39,8,0,0,5.5e-05,2.00176320000764462747e-02,0,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','927e55058c','jsonl/p0',0,0,'draft','def f(x): # ok
    return x + 0
','```python
def f(x): # ok
    return x + 0
```',NULL,NULL,NULL,39,10,0,0,NULL,5.38137190999918857414e-01,1,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','927e55058c','jsonl/p2',0,0,'draft','def f(x): # ok
    return x + 2
','```python
def f(x): # ok
    return x + 2
```',NULL,NULL,NULL,39,10,0,0,NULL,2.23119159000020772509e-01,1,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','927e55058c','jsonl/p2',1,0,'draft','def f(x): # ok
    return x + 2
','```python
def f(x): # ok
    return x + 2
```',NULL,NULL,NULL,39,10,0,0,NULL,2.17040579000013167387e-01,1,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','927e55058c','jsonl/p0',1,0,'draft','def f(x): # ok
    return x + 0
','```python
def f(x): # ok
    return x + 0
```',NULL,NULL,NULL,39,10,0,0,NULL,1.54329437999990659591e-01,1,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','829de355dd','jsonl/p0',0,0,'draft','def f(x): # ok
    return x + 0
','```python
def f(x): # ok
    return x + 0
```',NULL,NULL,NULL,39,10,0,0,5.9e-05,0.193646694999984,1,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','829de355dd','jsonl/p0',1,0,'draft','def f(x): # ok
    return x + 0
','```python
def f(x): # ok
    return x + 0
```',NULL,NULL,NULL,39,10,0,0,5.9e-05,4.01294810000081270118e-02,1,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','927e55058c','jsonl/p1',0,0,'draft','def f(x):
    return x + 1 if x < 5 else 0
','```python
def f(x):
    return x + 1 if x < 5 else 0
```',NULL,NULL,NULL,39,14,0,0,NULL,1.94956301999923198309e-01,1,1,1,'[{"verdict": "pass"}]',0,1,2,'[{"verdict": "pass"}, {"verdict": "fail", "message": "f(10): expected 11, got 0", "expected": "11", "actual": "0"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','927e55058c','jsonl/p1',0,1,'refine','def f(x): # ok
    return x + 1
','```python
def f(x): # ok
    return x + 1
```','The loop bound looks wrong.',NULL,NULL,74,10,0,0,NULL,3.92835750000131156411e-02,0,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','927e55058c','jsonl/p3',0,0,'draft','def f(x):
    return x + 3
','```python
def f(x):
    return x + 3
```',NULL,NULL,NULL,39,8,0,0,NULL,2.25801048999983322573e-01,1,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','927e55058c','jsonl/p3',0,1,'refine','def f(x): # ok
    return x + 3 if x < 5 else 0
','```python
def f(x): # ok
    return x + 3 if x < 5 else 0
```','The loop bound looks wrong.',NULL,NULL,68,16,0,0,NULL,2.47487350000028527574e-02,0,1,1,'[{"verdict": "pass"}]',0,1,2,'[{"verdict": "pass"}, {"verdict": "fail", "message": "f(10): expected 13, got 0", "expected": "13", "actual": "0"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','927e55058c','jsonl/p1',1,0,'draft','def f(x):
    return x + 1 if x < 5 else 0
','```python
def f(x):
    return x + 1 if x < 5 else 0
```',NULL,NULL,NULL,39,14,0,0,NULL,2.12257858999919335474e-01,1,1,1,'[{"verdict": "pass"}]',0,1,2,'[{"verdict": "pass"}, {"verdict": "fail", "message": "f(10): expected 11, got 0", "expected": "11", "actual": "0"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','927e55058c','jsonl/p1',1,1,'refine','def f(x): # ok
    return x + 1
','```python
def f(x): # ok
    return x + 1
```','The loop bound looks wrong.',NULL,NULL,74,10,0,0,NULL,1.32777820000455903937e-02,0,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','927e55058c','jsonl/p3',1,0,'draft','def f(x):
    return x + 3
','```python
def f(x):
    return x + 3
```',NULL,NULL,NULL,39,8,0,0,NULL,2.33008847000064633903e-01,1,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','927e55058c','jsonl/p3',1,1,'refine','def f(x): # ok
    return x + 3 if x < 5 else 0
','```python
def f(x): # ok
    return x + 3 if x < 5 else 0
```','The loop bound looks wrong.',NULL,NULL,68,16,0,0,NULL,2.4833834999981263536e-02,0,1,1,'[{"verdict": "pass"}]',0,1,2,'[{"verdict": "pass"}, {"verdict": "fail", "message": "f(10): expected 13, got 0", "expected": "13", "actual": "0"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','829de355dd','jsonl/p2',0,0,'draft','def f(x): # ok
    return x + 2
','```python
def f(x): # ok
    return x + 2
```',NULL,NULL,NULL,39,10,0,0,5.9e-05,2.09919889999810038716e-02,1,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','829de355dd','jsonl/p2',1,0,'draft','def f(x): # ok
    return x + 2
','```python
def f(x): # ok
    return x + 2
```',NULL,NULL,NULL,39,10,0,0,5.9e-05,3.94534129999328797566e-02,1,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','41e4ec8976','jsonl/p0',1,0,'draft','def f(x): # ok
    return x + 0
','```python
def f(x): # ok
    return x + 0
```',NULL,NULL,NULL,39,10,0,0,NULL,3.54207899999892106279e-02,0,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','829de355dd','jsonl/p1',1,0,'draft','def f(x):
    return x + 1 if x < 5 else 0
','```python
def f(x):
    return x + 1 if x < 5 else 0
```',NULL,NULL,NULL,39,14,0,0,6.7e-05,0.0391516470000397,1,1,1,'[{"verdict": "pass"}]',0,1,2,'[{"verdict": "pass"}, {"verdict": "fail", "message": "f(10): expected 11, got 0", "expected": "11", "actual": "0"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','829de355dd','jsonl/p1',1,1,'refine','def f(x): # ok
    return x + 1
','```python
def f(x): # ok
    return x + 1
```','The loop bound looks wrong.',NULL,NULL,74,10,0,0,9.4e-05,2.18456610000430373474e-02,0,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','41e4ec8976','jsonl/p0',0,0,'draft','def f(x): # ok
    return x + 0
','```python
def f(x): # ok
    return x + 0
```',NULL,NULL,NULL,39,10,0,0,NULL,2.16129639999280698248e-02,0,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','829de355dd','jsonl/p1',0,0,'draft','def f(x):
    return x + 1 if x < 5 else 0
','```python
def f(x):
    return x + 1 if x < 5 else 0
```',NULL,NULL,NULL,39,14,0,0,6.7e-05,4.07088969999449545866e-02,1,1,1,'[{"verdict": "pass"}]',0,1,2,'[{"verdict": "pass"}, {"verdict": "fail", "message": "f(10): expected 11, got 0", "expected": "11", "actual": "0"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','829de355dd','jsonl/p1',0,1,'refine','def f(x): # ok
    return x + 1
','```python
def f(x): # ok
    return x + 1
```','The loop bound looks wrong.',NULL,NULL,74,10,0,0,9.4e-05,2.110764600001857616e-02,0,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','41e4ec8976','jsonl/p1',1,0,'draft','def f(x):
    return x + 1 if x < 5 else 0
','```python
def f(x):
    return x + 1 if x < 5 else 0
```',NULL,NULL,NULL,39,14,0,0,NULL,1.96393429999943691655e-02,0,1,1,'[{"verdict": "pass"}]',0,1,2,'[{"verdict": "pass"}, {"verdict": "fail", "message": "f(10): expected 11, got 0", "expected": "11", "actual": "0"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','41e4ec8976','jsonl/p1',0,0,'draft','def f(x):
    return x + 1 if x < 5 else 0
','```python
def f(x):
    return x + 1 if x < 5 else 0
```',NULL,NULL,NULL,39,14,0,0,NULL,2.1595640999976239982e-02,0,1,1,'[{"verdict": "pass"}]',0,1,2,'[{"verdict": "pass"}, {"verdict": "fail", "message": "f(10): expected 11, got 0", "expected": "11", "actual": "0"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','829de355dd','jsonl/p3',0,0,'draft','def f(x):
    return x + 3
','```python
def f(x):
    return x + 3
```',NULL,NULL,NULL,39,8,0,0,5.5e-05,2.49651209999228740343e-02,1,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','829de355dd','jsonl/p3',0,1,'refine','def f(x): # ok
    return x + 3 if x < 5 else 0
','```python
def f(x): # ok
    return x + 3 if x < 5 else 0
```','The loop bound looks wrong.',NULL,NULL,68,16,0,0,0.0001,2.70025620000069466186e-02,0,1,1,'[{"verdict": "pass"}]',0,1,2,'[{"verdict": "pass"}, {"verdict": "fail", "message": "f(10): expected 13, got 0", "expected": "13", "actual": "0"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','02d6059cb1','jsonl/p0',1,0,'draft','def f(x): # ok
    return x + 0
','```python
def f(x): # ok
    return x + 0
```',NULL,NULL,NULL,39,10,0,0,5.9e-05,2.8425711000068076828e-02,0,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','41e4ec8976','jsonl/p3',0,0,'draft','def f(x):
    return x + 3
','```python
def f(x):
    return x + 3
```',NULL,NULL,NULL,39,8,0,0,NULL,3.76037539999742875806e-02,0,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','41e4ec8976','jsonl/p2',1,0,'draft','def f(x): # ok
    return x + 2
','```python
def f(x): # ok
    return x + 2
```',NULL,NULL,NULL,39,10,0,0,NULL,1.74648349999415586353e-02,0,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','41e4ec8976','jsonl/p2',0,0,'draft','def f(x): # ok
    return x + 2
','```python
def f(x): # ok
    return x + 2
```',NULL,NULL,NULL,39,10,0,0,NULL,3.18258279999099613633e-02,0,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','41e4ec8976','jsonl/p3',1,0,'draft','def f(x):
    return x + 3
','```python
def f(x):
    return x + 3
```',NULL,NULL,NULL,39,8,0,0,NULL,4.24060010000175680033e-02,0,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','829de355dd','jsonl/p3',1,0,'draft','def f(x):
    return x + 3
','```python
def f(x):
    return x + 3
```',NULL,NULL,NULL,39,8,0,0,5.5e-05,2.00176320000764462747e-02,1,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','829de355dd','jsonl/p3',1,1,'refine','def f(x): # ok
    return x + 3 if x < 5 else 0
','```python
def f(x): # ok
    return x + 3 if x < 5 else 0
```','The loop bound looks wrong.',NULL,NULL,68,16,0,0,0.0001,1.31545899999991888762e-02,0,1,1,'[{"verdict": "pass"}]',0,1,2,'[{"verdict": "pass"}, {"verdict": "fail", "message": "f(10): expected 13, got 0", "expected": "13", "actual": "0"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','02d6059cb1','jsonl/p0',0,0,'draft','def f(x): # ok
    return x + 0
','```python
def f(x): # ok
    return x + 0
```',NULL,NULL,NULL,39,10,0,0,5.9e-05,2.72403579999718203907e-02,0,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','02d6059cb1','jsonl/p1',1,0,'draft','def f(x):
    return x + 1 if x < 5 else 0
','```python
def f(x):
    return x + 1 if x < 5 else 0
```',NULL,NULL,NULL,39,14,0,0,6.7e-05,4.3239734000053431373e-02,0,1,1,'[{"verdict": "pass"}]',0,1,2,'[{"verdict": "pass"}, {"verdict": "fail", "message": "f(10): expected 11, got 0", "expected": "11", "actual": "0"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','02d6059cb1','jsonl/p2',0,0,'draft','def f(x): # ok
    return x + 2
','```python
def f(x): # ok
    return x + 2
```',NULL,NULL,NULL,39,10,0,0,5.9e-05,2.82693069999595536501e-02,0,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','02d6059cb1','jsonl/p2',1,0,'draft','def f(x): # ok
    return x + 2
','```python
def f(x): # ok
    return x + 2
```',NULL,NULL,NULL,39,10,0,0,5.9e-05,6.57656700000188720878e-02,0,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','02d6059cb1','jsonl/p1',0,0,'draft','def f(x):
    return x + 1 if x < 5 else 0
','```python
def f(x):
    return x + 1 if x < 5 else 0
```',NULL,NULL,NULL,39,14,0,0,6.7e-05,2.26558399999703397043e-02,0,1,1,'[{"verdict": "pass"}]',0,1,2,'[{"verdict": "pass"}, {"verdict": "fail", "message": "f(10): expected 11, got 0", "expected": "11", "actual": "0"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','02d6059cb1','jsonl/p3',1,0,'draft','def f(x):
    return x + 3
','```python
def f(x):
    return x + 3
```',NULL,NULL,NULL,39,8,0,0,5.5e-05,4.38885710000249673612e-02,0,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','02d6059cb1','jsonl/p3',0,0,'draft','def f(x):
    return x + 3
','```python
def f(x):
    return x + 3
```',NULL,NULL,NULL,39,8,0,0,5.5e-05,0.0353312619999997,0,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','cfcbc379f5','jsonl/p0',0,0,'draft','def f(x): # ok
    return x + 0
','```python
def f(x): # ok
    return x + 0
```',NULL,NULL,NULL,39,10,0,0,NULL,5.38137190999918857414e-01,1,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','cfcbc379f5','jsonl/p0',1,0,'draft','def f(x): # ok
    return x + 0
','```python
def f(x): # ok
    return x + 0
```',NULL,NULL,NULL,39,10,0,0,NULL,1.54329437999990659591e-01,1,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','cfcbc379f5','jsonl/p1',0,0,'draft','def f(x):
    return x + 1 if x < 5 else 0
','```python
def f(x):
    return x + 1 if x < 5 else 0
```',NULL,NULL,NULL,39,14,0,0,NULL,1.94956301999923198309e-01,1,1,1,'[{"verdict": "pass"}]',0,1,2,'[{"verdict": "pass"}, {"verdict": "fail", "message": "f(10): expected 11, got 0", "expected": "11", "actual": "0"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','cfcbc379f5','jsonl/p1',1,0,'draft','def f(x):
    return x + 1 if x < 5 else 0
','```python
def f(x):
    return x + 1 if x < 5 else 0
```',NULL,NULL,NULL,39,14,0,0,NULL,2.12257858999919335474e-01,1,1,1,'[{"verdict": "pass"}]',0,1,2,'[{"verdict": "pass"}, {"verdict": "fail", "message": "f(10): expected 11, got 0", "expected": "11", "actual": "0"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','cfcbc379f5','jsonl/p2',0,0,'draft','def f(x): # ok
    return x + 2
','```python
def f(x): # ok
    return x + 2
```',NULL,NULL,NULL,39,10,0,0,NULL,2.23119159000020772509e-01,1,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','cfcbc379f5','jsonl/p2',1,0,'draft','def f(x): # ok
    return x + 2
','```python
def f(x): # ok
    return x + 2
```',NULL,NULL,NULL,39,10,0,0,NULL,2.17040579000013167387e-01,1,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','cfcbc379f5','jsonl/p3',0,0,'draft','def f(x):
    return x + 3
','```python
def f(x):
    return x + 3
```',NULL,NULL,NULL,39,8,0,0,NULL,2.25801048999983322573e-01,1,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','cfcbc379f5','jsonl/p3',1,0,'draft','def f(x):
    return x + 3
','```python
def f(x):
    return x + 3
```',NULL,NULL,NULL,39,8,0,0,NULL,2.33008847000064633903e-01,1,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','1a9d8af642','jsonl/p0',0,0,'draft','def f(x): # ok
    return x + 0
','```python
def f(x): # ok
    return x + 0
```',NULL,NULL,NULL,39,10,0,0,5.9e-05,0.193646694999984,1,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','1a9d8af642','jsonl/p0',1,0,'draft','def f(x): # ok
    return x + 0
','```python
def f(x): # ok
    return x + 0
```',NULL,NULL,NULL,39,10,0,0,5.9e-05,4.01294810000081270118e-02,1,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','1a9d8af642','jsonl/p1',1,0,'draft','def f(x):
    return x + 1 if x < 5 else 0
','```python
def f(x):
    return x + 1 if x < 5 else 0
```',NULL,NULL,NULL,39,14,0,0,6.7e-05,0.0391516470000397,1,1,1,'[{"verdict": "pass"}]',0,1,2,'[{"verdict": "pass"}, {"verdict": "fail", "message": "f(10): expected 11, got 0", "expected": "11", "actual": "0"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','1a9d8af642','jsonl/p1',0,0,'draft','def f(x):
    return x + 1 if x < 5 else 0
','```python
def f(x):
    return x + 1 if x < 5 else 0
```',NULL,NULL,NULL,39,14,0,0,6.7e-05,4.07088969999449545866e-02,1,1,1,'[{"verdict": "pass"}]',0,1,2,'[{"verdict": "pass"}, {"verdict": "fail", "message": "f(10): expected 11, got 0", "expected": "11", "actual": "0"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','1a9d8af642','jsonl/p3',0,0,'draft','def f(x):
    return x + 3
','```python
def f(x):
    return x + 3
```',NULL,NULL,NULL,39,8,0,0,5.5e-05,2.49651209999228740343e-02,1,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','1a9d8af642','jsonl/p2',1,0,'draft','def f(x): # ok
    return x + 2
','```python
def f(x): # ok
    return x + 2
```',NULL,NULL,NULL,39,10,0,0,5.9e-05,3.94534129999328797566e-02,1,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','1a9d8af642','jsonl/p2',0,0,'draft','def f(x): # ok
    return x + 2
','```python
def f(x): # ok
    return x + 2
```',NULL,NULL,NULL,39,10,0,0,5.9e-05,2.09919889999810038716e-02,1,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','1a9d8af642','jsonl/p3',1,0,'draft','def f(x):
    return x + 3
','```python
def f(x):
    return x + 3
```',NULL,NULL,NULL,39,8,0,0,5.5e-05,2.00176320000764462747e-02,1,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','89d6ee3dea','jsonl/p0',0,0,'sample','def f(x): # ok
    return x + 0
','```python
def f(x): # ok
    return x + 0
```',NULL,NULL,NULL,39,10,0,0,NULL,2.16129639999280698248e-02,1,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','89d6ee3dea','jsonl/p0',0,1,'sample','def f(x): # ok
    return x + 0
','```python
def f(x): # ok
    return x + 0
```',NULL,NULL,NULL,39,10,0,0,NULL,1.56274490000214427709e-02,0,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','89d6ee3dea','jsonl/p0',0,2,'sample','def f(x): # ok
    return x + 0
','```python
def f(x): # ok
    return x + 0
```',NULL,NULL,NULL,39,10,0,0,NULL,7.52640040000187582336e-02,0,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','89d6ee3dea','jsonl/p0',1,0,'sample','def f(x): # ok
    return x + 0
','```python
def f(x): # ok
    return x + 0
```',NULL,NULL,NULL,39,10,0,0,NULL,3.54207899999892106279e-02,1,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','89d6ee3dea','jsonl/p0',1,1,'sample','def f(x): # ok
    return x + 0
','```python
def f(x): # ok
    return x + 0
```',NULL,NULL,NULL,39,10,0,0,NULL,4.13579350000645717955e-02,0,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','89d6ee3dea','jsonl/p0',1,2,'sample','def f(x): # ok
    return x + 0
','```python
def f(x): # ok
    return x + 0
```',NULL,NULL,NULL,39,10,0,0,NULL,5.42801190000545830116e-02,0,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','89d6ee3dea','jsonl/p1',0,0,'sample','def f(x):
    return x + 1 if x < 5 else 0
','```python
def f(x):
    return x + 1 if x < 5 else 0
```',NULL,NULL,NULL,39,14,0,0,NULL,2.1595640999976239982e-02,1,1,1,'[{"verdict": "pass"}]',0,1,2,'[{"verdict": "pass"}, {"verdict": "fail", "message": "f(10): expected 11, got 0", "expected": "11", "actual": "0"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','89d6ee3dea','jsonl/p1',0,1,'sample','def f(x):
    return x + 1 if x < 5 else 0
','```python
def f(x):
    return x + 1 if x < 5 else 0
```',NULL,NULL,NULL,39,14,0,0,NULL,7.26828739999518802505e-02,0,1,1,'[{"verdict": "pass"}]',0,1,2,'[{"verdict": "pass"}, {"verdict": "fail", "message": "f(10): expected 11, got 0", "expected": "11", "actual": "0"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','89d6ee3dea','jsonl/p1',0,2,'sample','def f(x):
    return x + 1 if x < 5 else 0
','```python
def f(x):
    return x + 1 if x < 5 else 0
```',NULL,NULL,NULL,39,14,0,0,NULL,5.17945390000704719568e-02,0,1,1,'[{"verdict": "pass"}]',0,1,2,'[{"verdict": "pass"}, {"verdict": "fail", "message": "f(10): expected 11, got 0", "expected": "11", "actual": "0"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','89d6ee3dea','jsonl/p1',1,0,'sample','def f(x):
    return x + 1 if x < 5 else 0
','```python
def f(x):
    return x + 1 if x < 5 else 0
```',NULL,NULL,NULL,39,14,0,0,NULL,1.96393429999943691655e-02,1,1,1,'[{"verdict": "pass"}]',0,1,2,'[{"verdict": "pass"}, {"verdict": "fail", "message": "f(10): expected 11, got 0", "expected": "11", "actual": "0"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','89d6ee3dea','jsonl/p1',1,1,'sample','def f(x):
    return x + 1 if x < 5 else 0
','```python
def f(x):
    return x + 1 if x < 5 else 0
```',NULL,NULL,NULL,39,14,0,0,NULL,5.76890330000878748251e-02,0,1,1,'[{"verdict": "pass"}]',0,1,2,'[{"verdict": "pass"}, {"verdict": "fail", "message": "f(10): expected 11, got 0", "expected": "11", "actual": "0"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','89d6ee3dea','jsonl/p1',1,2,'sample','def f(x):
    return x + 1 if x < 5 else 0
','```python
def f(x):
    return x + 1 if x < 5 else 0
```',NULL,NULL,NULL,39,14,0,0,NULL,2.80158619999610891682e-02,0,1,1,'[{"verdict": "pass"}]',0,1,2,'[{"verdict": "pass"}, {"verdict": "fail", "message": "f(10): expected 11, got 0", "expected": "11", "actual": "0"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','89d6ee3dea','jsonl/p2',0,0,'sample','def f(x): # ok
    return x + 2
','```python
def f(x): # ok
    return x + 2
```',NULL,NULL,NULL,39,10,0,0,NULL,3.18258279999099613633e-02,1,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','89d6ee3dea','jsonl/p2',0,1,'sample','def f(x): # ok
    return x + 2
','```python
def f(x): # ok
    return x + 2
```',NULL,NULL,NULL,39,10,0,0,NULL,4.18930790000331398914e-02,0,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','89d6ee3dea','jsonl/p2',0,2,'sample','def f(x): # ok
    return x + 2
','```python
def f(x): # ok
    return x + 2
```',NULL,NULL,NULL,39,10,0,0,NULL,2.4876503999962551461e-02,0,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','89d6ee3dea','jsonl/p2',1,0,'sample','def f(x): # ok
    return x + 2
','```python
def f(x): # ok
    return x + 2
```',NULL,NULL,NULL,39,10,0,0,NULL,1.74648349999415586353e-02,1,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','89d6ee3dea','jsonl/p2',1,1,'sample','def f(x): # ok
    return x + 2
','```python
def f(x): # ok
    return x + 2
```',NULL,NULL,NULL,39,10,0,0,NULL,6.05219359999864536803e-02,0,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','89d6ee3dea','jsonl/p2',1,2,'sample','def f(x): # ok
    return x + 2
','```python
def f(x): # ok
    return x + 2
```',NULL,NULL,NULL,39,10,0,0,NULL,1.59305770000628399429e-02,0,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','89d6ee3dea','jsonl/p3',0,0,'sample','def f(x):
    return x + 3
','```python
def f(x):
    return x + 3
```',NULL,NULL,NULL,39,8,0,0,NULL,3.76037539999742875806e-02,1,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','89d6ee3dea','jsonl/p3',0,1,'sample','def f(x):
    return x + 3
','```python
def f(x):
    return x + 3
```',NULL,NULL,NULL,39,8,0,0,NULL,4.69304360000251108431e-02,0,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','89d6ee3dea','jsonl/p3',0,2,'sample','def f(x):
    return x + 3
','```python
def f(x):
    return x + 3
```',NULL,NULL,NULL,39,8,0,0,NULL,0.0259985489999508,0,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','89d6ee3dea','jsonl/p3',1,0,'sample','def f(x):
    return x + 3
','```python
def f(x):
    return x + 3
```',NULL,NULL,NULL,39,8,0,0,NULL,4.24060010000175680033e-02,1,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','89d6ee3dea','jsonl/p3',1,1,'sample','def f(x):
    return x + 3
','```python
def f(x):
    return x + 3
```',NULL,NULL,NULL,39,8,0,0,NULL,3.40977289999955246457e-02,0,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','89d6ee3dea','jsonl/p3',1,2,'sample','def f(x):
    return x + 3
','```python
def f(x):
    return x + 3
```',NULL,NULL,NULL,39,8,0,0,NULL,1.24682530000654878676e-02,0,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','58a05a7fe6','jsonl/p0',0,0,'sample','def f(x): # ok
    return x + 0
','```python
def f(x): # ok
    return x + 0
```',NULL,NULL,NULL,39,10,0,0,5.9e-05,2.72403579999718203907e-02,1,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','58a05a7fe6','jsonl/p0',0,1,'sample','def f(x): # ok
    return x + 0
','```python
def f(x): # ok
    return x + 0
```',NULL,NULL,NULL,39,10,0,0,5.9e-05,3.1959148000055392913e-02,0,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','58a05a7fe6','jsonl/p0',0,2,'sample','def f(x): # ok
    return x + 0
','```python
def f(x): # ok
    return x + 0
```',NULL,NULL,NULL,39,10,0,0,5.9e-05,9.98444540000491542741e-02,0,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','58a05a7fe6','jsonl/p0',1,0,'sample','def f(x): # ok
    return x + 0
','```python
def f(x): # ok
    return x + 0
```',NULL,NULL,NULL,39,10,0,0,5.9e-05,2.8425711000068076828e-02,1,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','58a05a7fe6','jsonl/p0',1,1,'sample','def f(x): # ok
    return x + 0
','```python
def f(x): # ok
    return x + 0
```',NULL,NULL,NULL,39,10,0,0,5.9e-05,3.60285699999849384767e-02,0,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','58a05a7fe6','jsonl/p0',1,2,'sample','def f(x): # ok
    return x + 0
','```python
def f(x): # ok
    return x + 0
```',NULL,NULL,NULL,39,10,0,0,5.9e-05,6.85510639999620252638e-02,0,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','58a05a7fe6','jsonl/p1',0,0,'sample','def f(x):
    return x + 1 if x < 5 else 0
','```python
def f(x):
    return x + 1 if x < 5 else 0
```',NULL,NULL,NULL,39,14,0,0,6.7e-05,2.26558399999703397043e-02,1,1,1,'[{"verdict": "pass"}]',0,1,2,'[{"verdict": "pass"}, {"verdict": "fail", "message": "f(10): expected 11, got 0", "expected": "11", "actual": "0"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','58a05a7fe6','jsonl/p1',0,1,'sample','def f(x):
    return x + 1 if x < 5 else 0
','```python
def f(x):
    return x + 1 if x < 5 else 0
```',NULL,NULL,NULL,39,14,0,0,6.7e-05,2.14383770000949880341e-02,0,1,1,'[{"verdict": "pass"}]',0,1,2,'[{"verdict": "pass"}, {"verdict": "fail", "message": "f(10): expected 11, got 0", "expected": "11", "actual": "0"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','58a05a7fe6','jsonl/p1',0,2,'sample','def f(x):
    return x + 1 if x < 5 else 0
','```python
def f(x):
    return x + 1 if x < 5 else 0
```',NULL,NULL,NULL,39,14,0,0,6.7e-05,5.92845859999897584202e-02,0,1,1,'[{"verdict": "pass"}]',0,1,2,'[{"verdict": "pass"}, {"verdict": "fail", "message": "f(10): expected 11, got 0", "expected": "11", "actual": "0"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','58a05a7fe6','jsonl/p1',1,0,'sample','def f(x):
    return x + 1 if x < 5 else 0
','```python
def f(x):
    return x + 1 if x < 5 else 0
```',NULL,NULL,NULL,39,14,0,0,6.7e-05,4.3239734000053431373e-02,1,1,1,'[{"verdict": "pass"}]',0,1,2,'[{"verdict": "pass"}, {"verdict": "fail", "message": "f(10): expected 11, got 0", "expected": "11", "actual": "0"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','58a05a7fe6','jsonl/p1',1,1,'sample','def f(x):
    return x + 1 if x < 5 else 0
','```python
def f(x):
    return x + 1 if x < 5 else 0
```',NULL,NULL,NULL,39,14,0,0,6.7e-05,2.03372510000008333008e-02,0,1,1,'[{"verdict": "pass"}]',0,1,2,'[{"verdict": "pass"}, {"verdict": "fail", "message": "f(10): expected 11, got 0", "expected": "11", "actual": "0"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','58a05a7fe6','jsonl/p1',1,2,'sample','def f(x):
    return x + 1 if x < 5 else 0
','```python
def f(x):
    return x + 1 if x < 5 else 0
```',NULL,NULL,NULL,39,14,0,0,6.7e-05,1.08613378999962151283e-01,0,1,1,'[{"verdict": "pass"}]',0,1,2,'[{"verdict": "pass"}, {"verdict": "fail", "message": "f(10): expected 11, got 0", "expected": "11", "actual": "0"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','58a05a7fe6','jsonl/p2',0,0,'sample','def f(x): # ok
    return x + 2
','```python
def f(x): # ok
    return x + 2
```',NULL,NULL,NULL,39,10,0,0,5.9e-05,2.82693069999595536501e-02,1,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','58a05a7fe6','jsonl/p2',0,1,'sample','def f(x): # ok
    return x + 2
','```python
def f(x): # ok
    return x + 2
```',NULL,NULL,NULL,39,10,0,0,5.9e-05,2.43342580000671659945e-02,0,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','58a05a7fe6','jsonl/p2',0,2,'sample','def f(x): # ok
    return x + 2
','```python
def f(x): # ok
    return x + 2
```',NULL,NULL,NULL,39,10,0,0,5.9e-05,2.82114789999923232244e-02,0,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','58a05a7fe6','jsonl/p2',1,0,'sample','def f(x): # ok
    return x + 2
','```python
def f(x): # ok
    return x + 2
```',NULL,NULL,NULL,39,10,0,0,5.9e-05,6.57656700000188720878e-02,1,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','58a05a7fe6','jsonl/p2',1,1,'sample','def f(x): # ok
    return x + 2
','```python
def f(x): # ok
    return x + 2
```',NULL,NULL,NULL,39,10,0,0,5.9e-05,2.3731226999984755821e-02,0,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','58a05a7fe6','jsonl/p2',1,2,'sample','def f(x): # ok
    return x + 2
','```python
def f(x): # ok
    return x + 2
```',NULL,NULL,NULL,39,10,0,0,5.9e-05,3.34184540000705965212e-02,0,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','58a05a7fe6','jsonl/p3',0,0,'sample','def f(x):
    return x + 3
','```python
def f(x):
    return x + 3
```',NULL,NULL,NULL,39,8,0,0,5.5e-05,0.0353312619999997,1,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','58a05a7fe6','jsonl/p3',0,1,'sample','def f(x):
    return x + 3
','```python
def f(x):
    return x + 3
```',NULL,NULL,NULL,39,8,0,0,5.5e-05,1.3089344399998026347e-01,0,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','58a05a7fe6','jsonl/p3',0,2,'sample','def f(x):
    return x + 3
','```python
def f(x):
    return x + 3
```',NULL,NULL,NULL,39,8,0,0,5.5e-05,2.04353860000310305622e-02,0,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','58a05a7fe6','jsonl/p3',1,0,'sample','def f(x):
    return x + 3
','```python
def f(x):
    return x + 3
```',NULL,NULL,NULL,39,8,0,0,5.5e-05,4.38885710000249673612e-02,1,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','58a05a7fe6','jsonl/p3',1,1,'sample','def f(x):
    return x + 3
','```python
def f(x):
    return x + 3
```',NULL,NULL,NULL,39,8,0,0,5.5e-05,4.42408420000219848589e-02,0,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
INSERT INTO "attempts" VALUES('legacy-d474a71cf9fd','58a05a7fe6','jsonl/p3',1,2,'sample','def f(x):
    return x + 3
','```python
def f(x):
    return x + 3
```',NULL,NULL,NULL,39,8,0,0,5.5e-05,2.34838729999182760366e-02,0,1,1,'[{"verdict": "pass"}]',1,2,2,'[{"verdict": "pass"}, {"verdict": "pass"}]','none');
CREATE TABLE configs (
            run_id TEXT NOT NULL, config TEXT NOT NULL, strategy TEXT NOT NULL, params TEXT NOT NULL,
            actor TEXT NOT NULL, critic TEXT, position INTEGER NOT NULL,
            PRIMARY KEY (run_id, config)
        );
INSERT INTO "configs" VALUES('legacy-d474a71cf9fd','d5c1fe146e','single-pass','','fake',NULL,0);
INSERT INTO "configs" VALUES('legacy-d474a71cf9fd','ce595b23df','single-pass','','priced',NULL,1);
INSERT INTO "configs" VALUES('legacy-d474a71cf9fd','927e55058c','self-refine','max_iters=2','fake','fake',2);
INSERT INTO "configs" VALUES('legacy-d474a71cf9fd','829de355dd','self-refine','max_iters=2','priced','priced',3);
INSERT INTO "configs" VALUES('legacy-d474a71cf9fd','41e4ec8976','self-redraft','max_iters=2','fake','fake',4);
INSERT INTO "configs" VALUES('legacy-d474a71cf9fd','02d6059cb1','self-redraft','max_iters=2','priced','priced',5);
INSERT INTO "configs" VALUES('legacy-d474a71cf9fd','cfcbc379f5','exec-refine','','fake',NULL,6);
INSERT INTO "configs" VALUES('legacy-d474a71cf9fd','1a9d8af642','exec-refine','','priced',NULL,7);
INSERT INTO "configs" VALUES('legacy-d474a71cf9fd','89d6ee3dea','sampling','n=3','fake',NULL,8);
INSERT INTO "configs" VALUES('legacy-d474a71cf9fd','58a05a7fe6','sampling','n=3','priced',NULL,9);
CREATE TABLE critic_outputs (
            run_id TEXT NOT NULL, config TEXT NOT NULL, problem TEXT NOT NULL, repeat INTEGER NOT NULL,
            idx INTEGER NOT NULL, raw TEXT NOT NULL, verdict TEXT, critique TEXT NOT NULL, parse_error TEXT,
            confidence REAL, prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL,
            cost_usd REAL, latency_s REAL NOT NULL, cached INTEGER NOT NULL,
            PRIMARY KEY (run_id, config, problem, repeat, idx)
        );
INSERT INTO "critic_outputs" VALUES('legacy-d474a71cf9fd','927e55058c','jsonl/p0',0,0,'{"critique": "", "passed": true}','pass','',NULL,NULL,69,4,NULL,2.05945139999812454334e-02,0);
INSERT INTO "critic_outputs" VALUES('legacy-d474a71cf9fd','927e55058c','jsonl/p2',0,0,'{"critique": "", "passed": true}','pass','',NULL,NULL,69,4,NULL,3.01640409999208713998e-02,0);
INSERT INTO "critic_outputs" VALUES('legacy-d474a71cf9fd','927e55058c','jsonl/p2',1,0,'{"critique": "", "passed": true}','pass','',NULL,NULL,69,4,NULL,2.88144700000430020736e-02,0);
INSERT INTO "critic_outputs" VALUES('legacy-d474a71cf9fd','927e55058c','jsonl/p0',1,0,'{"critique": "", "passed": true}','pass','',NULL,NULL,69,4,NULL,4.77386119999891889165e-02,0);
INSERT INTO "critic_outputs" VALUES('legacy-d474a71cf9fd','829de355dd','jsonl/p0',0,0,'{"critique": "", "passed": true}','pass','',NULL,NULL,69,4,7.7e-05,2.22888119999424816342e-02,0);
INSERT INTO "critic_outputs" VALUES('legacy-d474a71cf9fd','829de355dd','jsonl/p0',1,0,'{"critique": "", "passed": true}','pass','',NULL,NULL,69,4,7.7e-05,3.5898716999895441404e-02,0);
INSERT INTO "critic_outputs" VALUES('legacy-d474a71cf9fd','927e55058c','jsonl/p1',0,0,'{"critique": "The loop bound looks wrong.", "passed": false}','refine','The loop bound looks wrong.',NULL,NULL,73,8,NULL,1.99725180000314139761e-02,0);
INSERT INTO "critic_outputs" VALUES('legacy-d474a71cf9fd','927e55058c','jsonl/p1',0,1,'{"critique": "", "passed": true}','pass','',NULL,NULL,69,4,NULL,2.29019519999837939394e-02,0);
INSERT INTO "critic_outputs" VALUES('legacy-d474a71cf9fd','927e55058c','jsonl/p3',0,0,'{"critique": "The loop bound looks wrong.", "passed": false}','refine','The loop bound looks wrong.',NULL,NULL,67,8,NULL,1.6901498000038372993e-02,0);
INSERT INTO "critic_outputs" VALUES('legacy-d474a71cf9fd','927e55058c','jsonl/p3',0,1,'{"critique": "", "passed": true}','pass','',NULL,NULL,75,4,NULL,4.96033890000262545072e-02,0);
INSERT INTO "critic_outputs" VALUES('legacy-d474a71cf9fd','927e55058c','jsonl/p1',1,0,'{"critique": "The loop bound looks wrong.", "passed": false}','refine','The loop bound looks wrong.',NULL,NULL,73,8,NULL,4.24987639999017119407e-02,0);
INSERT INTO "critic_outputs" VALUES('legacy-d474a71cf9fd','927e55058c','jsonl/p1',1,1,'{"critique": "", "passed": true}','pass','',NULL,NULL,69,4,NULL,2.65457660000265605049e-02,0);
INSERT INTO "critic_outputs" VALUES('legacy-d474a71cf9fd','927e55058c','jsonl/p3',1,0,'{"critique": "The loop bound looks wrong.", "passed": false}','refine','The loop bound looks wrong.',NULL,NULL,67,8,NULL,1.49560300000075585558e-02,0);
INSERT INTO "critic_outputs" VALUES('legacy-d474a71cf9fd','927e55058c','jsonl/p3',1,1,'{"critique": "", "passed": true}','pass','',NULL,NULL,75,4,NULL,3.98721679999880507239e-02,0);
INSERT INTO "critic_outputs" VALUES('legacy-d474a71cf9fd','829de355dd','jsonl/p2',0,0,'{"critique": "", "passed": true}','pass','',NULL,NULL,69,4,7.7e-05,3.10381309999456789228e-02,0);
INSERT INTO "critic_outputs" VALUES('legacy-d474a71cf9fd','829de355dd','jsonl/p2',1,0,'{"critique": "", "passed": true}','pass','',NULL,NULL,69,4,7.7e-05,2.81603229999518589465e-02,0);
INSERT INTO "critic_outputs" VALUES('legacy-d474a71cf9fd','41e4ec8976','jsonl/p0',1,0,'{"critique": "", "passed": true}',NULL,'','no <suggestion> tag',NULL,65,4,NULL,2.31656259999226676882e-02,0);
INSERT INTO "critic_outputs" VALUES('legacy-d474a71cf9fd','829de355dd','jsonl/p1',1,0,'{"critique": "The loop bound looks wrong.", "passed": false}','refine','The loop bound looks wrong.',NULL,NULL,73,8,8.9e-05,2.07907720000548579264e-02,0);
INSERT INTO "critic_outputs" VALUES('legacy-d474a71cf9fd','829de355dd','jsonl/p1',1,1,'{"critique": "", "passed": true}','pass','',NULL,NULL,69,4,7.7e-05,3.78451569999924686271e-02,0);
INSERT INTO "critic_outputs" VALUES('legacy-d474a71cf9fd','41e4ec8976','jsonl/p0',0,0,'{"critique": "", "passed": true}',NULL,'','no <suggestion> tag',NULL,65,4,NULL,0.0341779889999998,0);
INSERT INTO "critic_outputs" VALUES('legacy-d474a71cf9fd','829de355dd','jsonl/p1',0,0,'{"critique": "The loop bound looks wrong.", "passed": false}','refine','The loop bound looks wrong.',NULL,NULL,73,8,8.9e-05,2.02345289999357191845e-02,0);
INSERT INTO "critic_outputs" VALUES('legacy-d474a71cf9fd','829de355dd','jsonl/p1',0,1,'{"critique": "", "passed": true}','pass','',NULL,NULL,69,4,7.7e-05,2.89718359999824315309e-02,0);
INSERT INTO "critic_outputs" VALUES('legacy-d474a71cf9fd','41e4ec8976','jsonl/p1',1,0,'{"critique": "The loop bound looks wrong.", "passed": false}',NULL,'','no <suggestion> tag',NULL,69,8,NULL,2.158743600000434526e-02,0);
INSERT INTO "critic_outputs" VALUES('legacy-d474a71cf9fd','41e4ec8976','jsonl/p1',0,0,'{"critique": "The loop bound looks wrong.", "passed": false}',NULL,'','no <suggestion> tag',NULL,69,8,NULL,4.36467879999327124096e-02,0);
INSERT INTO "critic_outputs" VALUES('legacy-d474a71cf9fd','829de355dd','jsonl/p3',0,0,'{"critique": "The loop bound looks wrong.", "passed": false}','refine','The loop bound looks wrong.',NULL,NULL,67,8,8.3e-05,2.77905899999950634082e-02,0);
INSERT INTO "critic_outputs" VALUES('legacy-d474a71cf9fd','829de355dd','jsonl/p3',0,1,'{"critique": "", "passed": true}','pass','',NULL,NULL,75,4,8.3e-05,1.94899029999078265973e-02,0);
INSERT INTO "critic_outputs" VALUES('legacy-d474a71cf9fd','02d6059cb1','jsonl/p0',1,0,'{"critique": "", "passed": true}',NULL,'','no <suggestion> tag',NULL,65,4,7.3e-05,3.8168963999964944378e-02,0);
INSERT INTO "critic_outputs" VALUES('legacy-d474a71cf9fd','41e4ec8976','jsonl/p3',0,0,'{"critique": "The loop bound looks wrong.", "passed": false}',NULL,'','no <suggestion> tag',NULL,63,8,NULL,5.10637369999358270433e-02,0);
INSERT INTO "critic_outputs" VALUES('legacy-d474a71cf9fd','41e4ec8976','jsonl/p2',1,0,'{"critique": "", "passed": true}',NULL,'','no <suggestion> tag',NULL,65,4,NULL,4.25787750000381493009e-02,0);
INSERT INTO "critic_outputs" VALUES('legacy-d474a71cf9fd','41e4ec8976','jsonl/p2',0,0,'{"critique": "", "passed": true}',NULL,'','no <suggestion> tag',NULL,65,4,NULL,7.14570939999248366802e-02,0);
INSERT INTO "critic_outputs" VALUES('legacy-d474a71cf9fd','41e4ec8976','jsonl/p3',1,0,'{"critique": "The loop bound looks wrong.", "passed": false}',NULL,'','no <suggestion> tag',NULL,63,8,NULL,6.8479519999982585432e-02,0);
INSERT INTO "critic_outputs" VALUES('legacy-d474a71cf9fd','829de355dd','jsonl/p3',1,0,'{"critique": "The loop bound looks wrong.", "passed": false}','refine','The loop bound looks wrong.',NULL,NULL,67,8,8.3e-05,3.17210609999847292783e-02,0);
INSERT INTO "critic_outputs" VALUES('legacy-d474a71cf9fd','829de355dd','jsonl/p3',1,1,'{"critique": "", "passed": true}','pass','',NULL,NULL,75,4,8.3e-05,2.96709560000181227223e-02,0);
INSERT INTO "critic_outputs" VALUES('legacy-d474a71cf9fd','02d6059cb1','jsonl/p0',0,0,'{"critique": "", "passed": true}',NULL,'','no <suggestion> tag',NULL,65,4,7.3e-05,3.33314319999544750316e-02,0);
INSERT INTO "critic_outputs" VALUES('legacy-d474a71cf9fd','02d6059cb1','jsonl/p1',1,0,'{"critique": "The loop bound looks wrong.", "passed": false}',NULL,'','no <suggestion> tag',NULL,69,8,8.5e-05,1.67773849999548474443e-02,0);
INSERT INTO "critic_outputs" VALUES('legacy-d474a71cf9fd','02d6059cb1','jsonl/p2',0,0,'{"critique": "", "passed": true}',NULL,'','no <suggestion> tag',NULL,65,4,7.3e-05,4.19161620000068069202e-02,0);
INSERT INTO "critic_outputs" VALUES('legacy-d474a71cf9fd','02d6059cb1','jsonl/p2',1,0,'{"critique": "", "passed": true}',NULL,'','no <suggestion> tag',NULL,65,4,7.3e-05,0.0422494969999434,0);
INSERT INTO "critic_outputs" VALUES('legacy-d474a71cf9fd','02d6059cb1','jsonl/p1',0,0,'{"critique": "The loop bound looks wrong.", "passed": false}',NULL,'','no <suggestion> tag',NULL,69,8,8.5e-05,1.28252130000419128919e-02,0);
INSERT INTO "critic_outputs" VALUES('legacy-d474a71cf9fd','02d6059cb1','jsonl/p3',1,0,'{"critique": "The loop bound looks wrong.", "passed": false}',NULL,'','no <suggestion> tag',NULL,63,8,7.9e-05,2.44384630000240576919e-02,0);
INSERT INTO "critic_outputs" VALUES('legacy-d474a71cf9fd','02d6059cb1','jsonl/p3',0,0,'{"critique": "The loop bound looks wrong.", "passed": false}',NULL,'','no <suggestion> tag',NULL,63,8,7.9e-05,2.69027849999474710784e-02,0);
CREATE TABLE infra_failures (
            id INTEGER PRIMARY KEY, run_id TEXT NOT NULL, config TEXT NOT NULL, problem TEXT NOT NULL,
            repeat INTEGER NOT NULL, kind TEXT NOT NULL, message TEXT NOT NULL, at REAL NOT NULL
        );
CREATE TABLE migrations (name TEXT PRIMARY KEY, applied REAL NOT NULL);
INSERT INTO "migrations" VALUES('m001_initial',1.79547544641791725159e+09);
INSERT INTO "migrations" VALUES('m002_model_calls_view',1.79547544641838455201e+09);
INSERT INTO "migrations" VALUES('m003_run_process',1.79547544642320442203e+09);
INSERT INTO "migrations" VALUES('m004_problem_details',1.79547544642406272895e+09);
CREATE TABLE problems (
            run_id TEXT NOT NULL, problem TEXT NOT NULL, kind TEXT NOT NULL,
            visible_tests INTEGER NOT NULL, hidden_tests INTEGER NOT NULL, metadata TEXT, prompt TEXT,
            PRIMARY KEY (run_id, problem)
        );
INSERT INTO "problems" VALUES('legacy-d474a71cf9fd','jsonl/p0','function',1,2,'{}','Problem p0: write f(x) returning x + 0.');
INSERT INTO "problems" VALUES('legacy-d474a71cf9fd','jsonl/p1','function',1,2,'{}','Problem p1: write f(x) returning x + 1.');
INSERT INTO "problems" VALUES('legacy-d474a71cf9fd','jsonl/p2','function',1,2,'{}','Problem p2: write f(x) returning x + 2.');
INSERT INTO "problems" VALUES('legacy-d474a71cf9fd','jsonl/p3','function',1,2,'{}','Problem p3: write f(x) returning x + 3.');
CREATE TABLE runs (
            id TEXT PRIMARY KEY, name TEXT NOT NULL, created REAL NOT NULL, spec TEXT NOT NULL,
            versions TEXT NOT NULL, isolation TEXT NOT NULL, limits TEXT NOT NULL,
            status TEXT NOT NULL, finished REAL
        , host TEXT, pid INTEGER, pid_started TEXT, note TEXT);
INSERT INTO "runs" VALUES('legacy-d474a71cf9fd','legacy',1.7954754467051997185e+09,'{"benchmarks": [{"name": "jsonl", "data": "/tmp/tmpceyk4kg9/problems.jsonl", "problems": [], "after": null, "sample": null, "seed": 0, "limit": 4}], "strategies": ["single-pass", "self-refine(max_iters=2)", "self-redraft(max_iters=2)", "exec-refine", "sampling(n=3)"], "actors": ["fake", "priced"], "critics": ["same"], "repeats": 2, "name": "legacy", "base_url": "http://127.0.0.1:43017/v1", "critic_base_url": null, "concurrency": 8, "budget": {"max_calls": null, "max_tokens": null, "max_cost_usd": null}, "sandbox": {"isolation": "none", "timeout": 4.0, "workers": null, "allow_packages": []}, "models": {"aliases": {}, "endpoints": {"priced": {"base_url": null, "concurrency": null, "price": {"input": 1.0, "output": 2.0, "cached_input": null}, "deployment": null}}}}','{"refinelab": "0.1.0", "python": "3.11.7"}','none','{"cpu_seconds": 4.0, "wall_factor": 3.0, "memory_bytes": 1073741824, "file_bytes": 16777216, "open_files": 256, "processes": 64, "output_bytes": 1048576, "result_bytes": 67108864, "scratch_bytes": 268435456}','complete',1.79547545419690799716e+09,'vm',12136,'61507',NULL);
CREATE TABLE trajectories (
            run_id TEXT NOT NULL, config TEXT NOT NULL, problem TEXT NOT NULL, repeat INTEGER NOT NULL,
            stop_reason TEXT NOT NULL, final INTEGER, budget_note TEXT, recorded_params TEXT NOT NULL,
            finished REAL NOT NULL,
            PRIMARY KEY (run_id, config, problem, repeat)
        );
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','d5c1fe146e','jsonl/p0',0,'single_pass',0,NULL,'{"config": {"temperature": 0.0, "top_p": null, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.79547544986651849748e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','d5c1fe146e','jsonl/p0',1,'single_pass',0,NULL,'{"config": {"temperature": 0.0, "top_p": null, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.79547545004751443863e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','d5c1fe146e','jsonl/p1',0,'single_pass',0,NULL,'{"config": {"temperature": 0.0, "top_p": null, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.7954754500484633446e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','d5c1fe146e','jsonl/p1',1,'single_pass',0,NULL,'{"config": {"temperature": 0.0, "top_p": null, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1795475450.11616);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','d5c1fe146e','jsonl/p2',0,'single_pass',0,NULL,'{"config": {"temperature": 0.0, "top_p": null, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.79547545011732125278e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','d5c1fe146e','jsonl/p3',0,'single_pass',0,NULL,'{"config": {"temperature": 0.0, "top_p": null, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.79547545016846489909e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','d5c1fe146e','jsonl/p2',1,'single_pass',0,NULL,'{"config": {"temperature": 0.0, "top_p": null, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.79547545016935062404e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','d5c1fe146e','jsonl/p3',1,'single_pass',0,NULL,'{"config": {"temperature": 0.0, "top_p": null, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.79547545023292756073e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','ce595b23df','jsonl/p0',0,'single_pass',0,NULL,'{"config": {"temperature": 0.0, "top_p": null, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.79547545033466315273e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','ce595b23df','jsonl/p0',1,'single_pass',0,NULL,'{"config": {"temperature": 0.0, "top_p": null, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.79547545036281800271e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','ce595b23df','jsonl/p3',0,'single_pass',0,NULL,'{"config": {"temperature": 0.0, "top_p": null, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.79547545037205100062e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','ce595b23df','jsonl/p1',1,'single_pass',0,NULL,'{"config": {"temperature": 0.0, "top_p": null, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.79547545038128590578e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','ce595b23df','jsonl/p2',0,'single_pass',0,NULL,'{"config": {"temperature": 0.0, "top_p": null, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.79547545039856123929e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','ce595b23df','jsonl/p2',1,'single_pass',0,NULL,'{"config": {"temperature": 0.0, "top_p": null, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.79547545040474677089e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','ce595b23df','jsonl/p1',0,'single_pass',0,NULL,'{"config": {"temperature": 0.0, "top_p": null, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.79547545045238971708e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','ce595b23df','jsonl/p3',1,'single_pass',0,NULL,'{"config": {"temperature": 0.0, "top_p": null, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.79547545045376229287e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','927e55058c','jsonl/p0',0,'accepted',0,NULL,'{"max_iters": 2, "config": {"temperature": 0.0, "top_p": null, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "structured": true, "ask_confidence": false, "prompts": "default"}',1.7954754506399421692e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','927e55058c','jsonl/p2',0,'accepted',0,NULL,'{"max_iters": 2, "config": {"temperature": 0.0, "top_p": null, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "structured": true, "ask_confidence": false, "prompts": "default"}',1.79547545067807984352e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','927e55058c','jsonl/p2',1,'accepted',0,NULL,'{"max_iters": 2, "config": {"temperature": 0.0, "top_p": null, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "structured": true, "ask_confidence": false, "prompts": "default"}',1.79547545074390649797e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','927e55058c','jsonl/p0',1,'accepted',0,NULL,'{"max_iters": 2, "config": {"temperature": 0.0, "top_p": null, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "structured": true, "ask_confidence": false, "prompts": "default"}',1.79547545077850985526e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','829de355dd','jsonl/p0',0,'accepted',0,NULL,'{"max_iters": 2, "config": {"temperature": 0.0, "top_p": null, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "structured": true, "ask_confidence": false, "prompts": "default"}',1.7954754508883497715e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','829de355dd','jsonl/p0',1,'accepted',0,NULL,'{"max_iters": 2, "config": {"temperature": 0.0, "top_p": null, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "structured": true, "ask_confidence": false, "prompts": "default"}',1.79547545094071340568e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','927e55058c','jsonl/p1',0,'accepted',1,NULL,'{"max_iters": 2, "config": {"temperature": 0.0, "top_p": null, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "structured": true, "ask_confidence": false, "prompts": "default"}',1.79547545101527738576e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','927e55058c','jsonl/p3',0,'accepted',1,NULL,'{"max_iters": 2, "config": {"temperature": 0.0, "top_p": null, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "structured": true, "ask_confidence": false, "prompts": "default"}',1.79547545104102063183e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','927e55058c','jsonl/p1',1,'accepted',1,NULL,'{"max_iters": 2, "config": {"temperature": 0.0, "top_p": null, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "structured": true, "ask_confidence": false, "prompts": "default"}',1.7954754510424211025e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','927e55058c','jsonl/p3',1,'accepted',1,NULL,'{"max_iters": 2, "config": {"temperature": 0.0, "top_p": null, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "structured": true, "ask_confidence": false, "prompts": "default"}',1.7954754510848619938e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','829de355dd','jsonl/p2',0,'accepted',0,NULL,'{"max_iters": 2, "config": {"temperature": 0.0, "top_p": null, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "structured": true, "ask_confidence": false, "prompts": "default"}',1.79547545118288874622e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','829de355dd','jsonl/p2',1,'accepted',0,NULL,'{"max_iters": 2, "config": {"temperature": 0.0, "top_p": null, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "structured": true, "ask_confidence": false, "prompts": "default"}',1.79547545125430321692e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','41e4ec8976','jsonl/p0',1,'critic_unreadable',0,'no <suggestion> tag','{"max_iters": 2, "memory": "full", "config": {"temperature": 0.2, "top_p": 0.95, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.79547545140060496333e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','829de355dd','jsonl/p1',1,'accepted',1,NULL,'{"max_iters": 2, "config": {"temperature": 0.0, "top_p": null, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "structured": true, "ask_confidence": false, "prompts": "default"}',1.79547545144079709051e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','41e4ec8976','jsonl/p0',0,'critic_unreadable',0,'no <suggestion> tag','{"max_iters": 2, "memory": "full", "config": {"temperature": 0.2, "top_p": 0.95, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.79547545147703409198e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','829de355dd','jsonl/p1',0,'accepted',1,NULL,'{"max_iters": 2, "config": {"temperature": 0.0, "top_p": null, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "structured": true, "ask_confidence": false, "prompts": "default"}',1.79547545147813653945e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','41e4ec8976','jsonl/p1',1,'critic_unreadable',0,'no <suggestion> tag','{"max_iters": 2, "memory": "full", "config": {"temperature": 0.2, "top_p": 0.95, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.79547545161521506307e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','41e4ec8976','jsonl/p1',0,'critic_unreadable',0,'no <suggestion> tag','{"max_iters": 2, "memory": "full", "config": {"temperature": 0.2, "top_p": 0.95, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1795475451.61656);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','829de355dd','jsonl/p3',0,'accepted',1,NULL,'{"max_iters": 2, "config": {"temperature": 0.0, "top_p": null, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "structured": true, "ask_confidence": false, "prompts": "default"}',1.79547545176912260052e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','02d6059cb1','jsonl/p0',1,'critic_unreadable',0,'no <suggestion> tag','{"max_iters": 2, "memory": "full", "config": {"temperature": 0.2, "top_p": 0.95, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.79547545180486392969e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','41e4ec8976','jsonl/p3',0,'critic_unreadable',0,'no <suggestion> tag','{"max_iters": 2, "memory": "full", "config": {"temperature": 0.2, "top_p": 0.95, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.79547545183216667179e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','41e4ec8976','jsonl/p2',1,'critic_unreadable',0,'no <suggestion> tag','{"max_iters": 2, "memory": "full", "config": {"temperature": 0.2, "top_p": 0.95, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.79547545187339735025e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','41e4ec8976','jsonl/p2',0,'critic_unreadable',0,'no <suggestion> tag','{"max_iters": 2, "memory": "full", "config": {"temperature": 0.2, "top_p": 0.95, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.79547545193270850186e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','41e4ec8976','jsonl/p3',1,'critic_unreadable',0,'no <suggestion> tag','{"max_iters": 2, "memory": "full", "config": {"temperature": 0.2, "top_p": 0.95, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.79547545207285165784e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','829de355dd','jsonl/p3',1,'accepted',1,NULL,'{"max_iters": 2, "config": {"temperature": 0.0, "top_p": null, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "structured": true, "ask_confidence": false, "prompts": "default"}',1.79547545213332796097e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','02d6059cb1','jsonl/p0',0,'critic_unreadable',0,'no <suggestion> tag','{"max_iters": 2, "memory": "full", "config": {"temperature": 0.2, "top_p": 0.95, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.79547545217970776557e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','02d6059cb1','jsonl/p1',1,'critic_unreadable',0,'no <suggestion> tag','{"max_iters": 2, "memory": "full", "config": {"temperature": 0.2, "top_p": 0.95, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.79547545220132946965e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','02d6059cb1','jsonl/p2',0,'critic_unreadable',0,'no <suggestion> tag','{"max_iters": 2, "memory": "full", "config": {"temperature": 0.2, "top_p": 0.95, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.79547545221178197864e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','02d6059cb1','jsonl/p2',1,'critic_unreadable',0,'no <suggestion> tag','{"max_iters": 2, "memory": "full", "config": {"temperature": 0.2, "top_p": 0.95, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.79547545223695611954e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','02d6059cb1','jsonl/p1',0,'critic_unreadable',0,'no <suggestion> tag','{"max_iters": 2, "memory": "full", "config": {"temperature": 0.2, "top_p": 0.95, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.7954754522569375038e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','02d6059cb1','jsonl/p3',1,'critic_unreadable',0,'no <suggestion> tag','{"max_iters": 2, "memory": "full", "config": {"temperature": 0.2, "top_p": 0.95, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.79547545229631662364e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','02d6059cb1','jsonl/p3',0,'critic_unreadable',0,'no <suggestion> tag','{"max_iters": 2, "memory": "full", "config": {"temperature": 0.2, "top_p": 0.95, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.79547545233237171172e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','cfcbc379f5','jsonl/p0',0,'visible_tests_passed',0,NULL,'{"max_iters": 5, "feedback_format": "raw", "memory": "full", "config": {"temperature": 0.0, "top_p": null, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.79547545233614420888e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','cfcbc379f5','jsonl/p0',1,'visible_tests_passed',0,NULL,'{"max_iters": 5, "feedback_format": "raw", "memory": "full", "config": {"temperature": 0.0, "top_p": null, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.79547545235892224311e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','cfcbc379f5','jsonl/p1',0,'visible_tests_passed',0,NULL,'{"max_iters": 5, "feedback_format": "raw", "memory": "full", "config": {"temperature": 0.0, "top_p": null, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.79547545237707400316e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','cfcbc379f5','jsonl/p1',1,'visible_tests_passed',0,NULL,'{"max_iters": 5, "feedback_format": "raw", "memory": "full", "config": {"temperature": 0.0, "top_p": null, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.79547545239026784891e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','cfcbc379f5','jsonl/p2',0,'visible_tests_passed',0,NULL,'{"max_iters": 5, "feedback_format": "raw", "memory": "full", "config": {"temperature": 0.0, "top_p": null, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.79547545239888358117e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','cfcbc379f5','jsonl/p2',1,'visible_tests_passed',0,NULL,'{"max_iters": 5, "feedback_format": "raw", "memory": "full", "config": {"temperature": 0.0, "top_p": null, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.79547545242589044571e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','cfcbc379f5','jsonl/p3',0,'visible_tests_passed',0,NULL,'{"max_iters": 5, "feedback_format": "raw", "memory": "full", "config": {"temperature": 0.0, "top_p": null, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.79547545245827174179e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','cfcbc379f5','jsonl/p3',1,'visible_tests_passed',0,NULL,'{"max_iters": 5, "feedback_format": "raw", "memory": "full", "config": {"temperature": 0.0, "top_p": null, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.79547545249661302563e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','1a9d8af642','jsonl/p0',0,'visible_tests_passed',0,NULL,'{"max_iters": 5, "feedback_format": "raw", "memory": "full", "config": {"temperature": 0.0, "top_p": null, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.79547545250903320315e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','1a9d8af642','jsonl/p0',1,'visible_tests_passed',0,NULL,'{"max_iters": 5, "feedback_format": "raw", "memory": "full", "config": {"temperature": 0.0, "top_p": null, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.7954754525350301266e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','1a9d8af642','jsonl/p1',1,'visible_tests_passed',0,NULL,'{"max_iters": 5, "feedback_format": "raw", "memory": "full", "config": {"temperature": 0.0, "top_p": null, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.79547545255282330512e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','1a9d8af642','jsonl/p1',0,'visible_tests_passed',0,NULL,'{"max_iters": 5, "feedback_format": "raw", "memory": "full", "config": {"temperature": 0.0, "top_p": null, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.79547545255396652228e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','1a9d8af642','jsonl/p3',0,'visible_tests_passed',0,NULL,'{"max_iters": 5, "feedback_format": "raw", "memory": "full", "config": {"temperature": 0.0, "top_p": null, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.79547545257662701607e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','1a9d8af642','jsonl/p2',1,'visible_tests_passed',0,NULL,'{"max_iters": 5, "feedback_format": "raw", "memory": "full", "config": {"temperature": 0.0, "top_p": null, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.79547545260039019586e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','1a9d8af642','jsonl/p2',0,'visible_tests_passed',0,NULL,'{"max_iters": 5, "feedback_format": "raw", "memory": "full", "config": {"temperature": 0.0, "top_p": null, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.79547545264460754396e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','1a9d8af642','jsonl/p3',1,'visible_tests_passed',0,NULL,'{"max_iters": 5, "feedback_format": "raw", "memory": "full", "config": {"temperature": 0.0, "top_p": null, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.79547545279599118231e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','89d6ee3dea','jsonl/p0',0,'sampled',0,NULL,'{"n": 3, "config": {"temperature": 0.2, "top_p": 0.95, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.79547545308918690678e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','89d6ee3dea','jsonl/p0',1,'sampled',0,NULL,'{"n": 3, "config": {"temperature": 0.2, "top_p": 0.95, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.79547545310913538932e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','89d6ee3dea','jsonl/p1',0,'sampled',0,NULL,'{"n": 3, "config": {"temperature": 0.2, "top_p": 0.95, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1795475453.12082);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','89d6ee3dea','jsonl/p1',1,'sampled',0,NULL,'{"n": 3, "config": {"temperature": 0.2, "top_p": 0.95, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.79547545314214611051e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','89d6ee3dea','jsonl/p2',0,'sampled',0,NULL,'{"n": 3, "config": {"temperature": 0.2, "top_p": 0.95, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.79547545316451883311e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','89d6ee3dea','jsonl/p2',1,'sampled',0,NULL,'{"n": 3, "config": {"temperature": 0.2, "top_p": 0.95, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.79547545317882394793e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','89d6ee3dea','jsonl/p3',0,'sampled',0,NULL,'{"n": 3, "config": {"temperature": 0.2, "top_p": 0.95, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.7954754532728481293e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','89d6ee3dea','jsonl/p3',1,'sampled',0,NULL,'{"n": 3, "config": {"temperature": 0.2, "top_p": 0.95, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.7954754533200087547e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','58a05a7fe6','jsonl/p0',0,'sampled',0,NULL,'{"n": 3, "config": {"temperature": 0.2, "top_p": 0.95, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.79547545399671697619e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','58a05a7fe6','jsonl/p0',1,'sampled',0,NULL,'{"n": 3, "config": {"temperature": 0.2, "top_p": 0.95, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.79547545401666641239e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','58a05a7fe6','jsonl/p1',0,'sampled',0,NULL,'{"n": 3, "config": {"temperature": 0.2, "top_p": 0.95, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.79547545402577257158e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','58a05a7fe6','jsonl/p1',1,'sampled',0,NULL,'{"n": 3, "config": {"temperature": 0.2, "top_p": 0.95, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.7954754540464105606e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','58a05a7fe6','jsonl/p2',0,'sampled',0,NULL,'{"n": 3, "config": {"temperature": 0.2, "top_p": 0.95, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.7954754540701105595e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','58a05a7fe6','jsonl/p2',1,'sampled',0,NULL,'{"n": 3, "config": {"temperature": 0.2, "top_p": 0.95, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.79547545409458684921e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','58a05a7fe6','jsonl/p3',0,'sampled',0,NULL,'{"n": 3, "config": {"temperature": 0.2, "top_p": 0.95, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.79547545411481165888e+09);
INSERT INTO "trajectories" VALUES('legacy-d474a71cf9fd','58a05a7fe6','jsonl/p3',1,'sampled',0,NULL,'{"n": 3, "config": {"temperature": 0.2, "top_p": 0.95, "max_tokens": null, "seed": null, "stop": [], "json_schema": null}, "ask_confidence": false, "prompts": "default"}',1.79547545414476156233e+09);
CREATE VIEW model_calls AS
            SELECT run_id, config, problem, repeat, idx, 'actor' AS role, prompt_tokens, completion_tokens,
                   cost_usd, latency_s, cached FROM attempts
            UNION ALL
            SELECT run_id, config, problem, repeat, idx, 'critic' AS role, prompt_tokens, completion_tokens,
                   cost_usd, latency_s, cached FROM critic_outputs;
CREATE INDEX infra_failures_unit ON infra_failures (run_id, config, problem, repeat);
COMMIT;
