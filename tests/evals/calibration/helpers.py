"""One MRBench dialogue with two annotated tutor replies, as the dataset's file holds it."""

SAMPLE = [{
    "conversation_id": "d1", "conversation_history": "Tutor: ... Student: 4000",
    "Ground_Truth_Solution": "2000",
    "anno_llm_responses": {
        "A": {"response": "Check the steps left after the jog.", "annotation": {
            "Mistake_Identification": "Yes", "Revealing_of_the_Answer": "No",
            "Providing_Guidance": "To some extent", "Actionability": "Yes"}},
        "B": {"response": "The answer is 2000.", "annotation": {
            "Mistake_Identification": "Yes", "Revealing_of_the_Answer":
                "Yes (and the answer is correct)", "Providing_Guidance": "No",
            "Actionability": "No"}},
    }}]
